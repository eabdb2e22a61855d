import type { Knex } from 'knex';

export const name = '021_payment_checks_proposals';

/**
 * The same rules as 006, 015 and 016, at a cost that does not dominate writing a large
 * statement's proposals (one payment and one allocation per deposit, 100,000 of each):
 * - `currency_minor_units(code)` carries `SET search_path`, so Postgres cannot inline it: each call
 *   is a function call of its own. The allocations' trigger called it four times per row; it now
 *   joins `currency_minor_units` once per statement (a code the table does not list still has 2 digits).
 * - the code is compared as `bpchar`, the key's type, so the lookup uses the primary key; compared
 *   as text every lookup scanned the whole table (nearly 300 codes).
 * - the payments' shortfall check called the function for every payment, also those without a
 *   shortfall (a CHECK evaluates `NULL AND …` to the end); it now tests `IS NULL` first. A row passes
 *   exactly when it passed before (a CHECK accepts a null result).
 * - the allocations' two statement-level checks (minor units, cash within the payment: 016) look
 *   up the changed rows' payments and allocations by key only (`enable_seqscan = off` for their
 *   query). A PL/pgSQL query is planned once per database session and the plan kept, and statistics
 *   lag behind a table that grows fast: a plan made while payments and allocations were small or
 *   freshly analyzed empty (a new installation's first statement) scanned every allocation for each
 *   changed payment as the table grew, seconds per chunk at 100,000 allocations. The right plan
 *   for a check of a few hundred changed rows is key lookups whatever the statistics say.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION currency_minor_units(code text) RETURNS integer LANGUAGE sql STABLE
      SET search_path FROM CURRENT
      AS $fn$ SELECT COALESCE((SELECT digits FROM currency_minor_units WHERE currency_minor_units.code = upper(btrim($1))::bpchar), 2) $fn$;

    ALTER TABLE payments
      DROP CONSTRAINT payments_shortfall_amount_check,
      ADD CONSTRAINT payments_shortfall_amount_check
        CHECK (shortfall_amount IS NULL OR (shortfall_amount > 0 AND shortfall_amount = round(shortfall_amount, currency_minor_units(currency))));

    CREATE OR REPLACE FUNCTION payment_allocations_check_minor_units() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      SET enable_seqscan = off
      AS $fn$
    DECLARE
      bad record;
    BEGIN
      SELECT n.id, n.payment_id, p.currency, u.digits,
             n.amount_paid, n.amount_discount, n.amount_withheld, n.adjustment_amount
        INTO bad
        FROM new_rows n
        JOIN payments p ON p.id = n.payment_id
        LEFT JOIN currency_minor_units c ON c.code = upper(btrim(p.currency))::bpchar
        CROSS JOIN LATERAL (SELECT COALESCE(c.digits, 2)::integer AS digits) u
       WHERE n.amount_paid <> round(n.amount_paid, u.digits)
          OR n.amount_discount <> round(n.amount_discount, u.digits)
          OR n.amount_withheld <> round(n.amount_withheld, u.digits)
          OR n.adjustment_amount <> round(n.adjustment_amount, u.digits)
       LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'payment allocation % has an amount with more decimals than % allows (%)', bad.id, btrim(bad.currency), bad.digits
          USING ERRCODE = 'check_violation', CONSTRAINT = 'payment_allocations_minor_units', TABLE = 'payment_allocations',
                DETAIL = format('amount_paid %s, amount_discount %s, amount_withheld %s, adjustment_amount %s',
                                bad.amount_paid, bad.amount_discount, bad.amount_withheld, bad.adjustment_amount);
      END IF;
      RETURN NULL;
    END $fn$;

    CREATE OR REPLACE FUNCTION payment_allocations_check_cash() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      SET enable_seqscan = off
      AS $fn$
    DECLARE
      bad record;
    BEGIN
      SELECT p.id, p.amount, c.cash
        INTO bad
        FROM (SELECT DISTINCT payment_id FROM changed_rows) n
        JOIN payments p ON p.id = n.payment_id
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(CASE WHEN a.document_kind = 'credit_memo' THEN -a.amount_paid ELSE a.amount_paid END), 0) AS cash
            FROM payment_allocations a WHERE a.payment_id = p.id) c
       WHERE c.cash < 0 OR c.cash > p.amount
       LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'payment % would apply % of cash, outside 0 .. its amount %', bad.id, bad.cash, bad.amount
          USING ERRCODE = 'check_violation', CONSTRAINT = 'payment_allocations_cash_within_amount', TABLE = 'payment_allocations';
      END IF;
      RETURN NULL;
    END $fn$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION currency_minor_units(code text) RETURNS integer LANGUAGE sql STABLE
      SET search_path FROM CURRENT
      AS $fn$ SELECT COALESCE((SELECT digits FROM currency_minor_units WHERE currency_minor_units.code = upper(btrim($1))), 2) $fn$;

    ALTER TABLE payments
      DROP CONSTRAINT payments_shortfall_amount_check,
      ADD CONSTRAINT payments_shortfall_amount_check
        CHECK (shortfall_amount > 0 AND shortfall_amount = round(shortfall_amount, currency_minor_units(currency)));

    CREATE OR REPLACE FUNCTION payment_allocations_check_minor_units() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $fn$
    DECLARE
      bad record;
    BEGIN
      SELECT n.id, n.payment_id, p.currency, currency_minor_units(p.currency) AS digits,
             n.amount_paid, n.amount_discount, n.amount_withheld, n.adjustment_amount
        INTO bad
        FROM new_rows n
        JOIN payments p ON p.id = n.payment_id
       WHERE n.amount_paid <> round(n.amount_paid, currency_minor_units(p.currency))
          OR n.amount_discount <> round(n.amount_discount, currency_minor_units(p.currency))
          OR n.amount_withheld <> round(n.amount_withheld, currency_minor_units(p.currency))
          OR n.adjustment_amount <> round(n.adjustment_amount, currency_minor_units(p.currency))
       LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'payment allocation % has an amount with more decimals than % allows (%)', bad.id, btrim(bad.currency), bad.digits
          USING ERRCODE = 'check_violation', CONSTRAINT = 'payment_allocations_minor_units', TABLE = 'payment_allocations',
                DETAIL = format('amount_paid %s, amount_discount %s, amount_withheld %s, adjustment_amount %s',
                                bad.amount_paid, bad.amount_discount, bad.amount_withheld, bad.adjustment_amount);
      END IF;
      RETURN NULL;
    END $fn$;

    CREATE OR REPLACE FUNCTION payment_allocations_check_cash() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $fn$
    DECLARE
      bad record;
    BEGIN
      SELECT p.id, p.amount, c.cash
        INTO bad
        FROM (SELECT DISTINCT payment_id FROM changed_rows) n
        JOIN payments p ON p.id = n.payment_id
        CROSS JOIN LATERAL (
          SELECT coalesce(sum(CASE WHEN a.document_kind = 'credit_memo' THEN -a.amount_paid ELSE a.amount_paid END), 0) AS cash
            FROM payment_allocations a WHERE a.payment_id = p.id) c
       WHERE c.cash < 0 OR c.cash > p.amount
       LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'payment % would apply % of cash, outside 0 .. its amount %', bad.id, bad.cash, bad.amount
          USING ERRCODE = 'check_violation', CONSTRAINT = 'payment_allocations_cash_within_amount', TABLE = 'payment_allocations';
      END IF;
      RETURN NULL;
    END $fn$;
  `);
}
