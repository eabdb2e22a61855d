import type { Knex } from 'knex';
import { currencyMinorUnits, isoCurrencyCodes } from '@rp/platform';

export const name = '006_allocation_minor_units';

/**
 * Allocation amounts respect their currency's minor units (JPY 0, EUR 2, KWD 3 decimals) in the
 * database too, not only in the API's validation:
 * - `currency_minor_units`: the minor unit of every ISO 4217 code the kernel knows (current list
 *   and CLDR's historic codes, from the maintained packages, never typed in by hand), seeded here;
 *   `currency_minor_units(code)` reads it, 2 for a code it does not list (as the kernel does);
 * - a payment allocation's amount_paid, amount_discount, amount_withheld and adjustment_amount
 *   must equal themselves rounded to the minor units of its payment's currency. A CHECK cannot
 *   look at the payment, so statement-level triggers check every inserted or updated row at once
 *   (one join per statement, not a lookup per row) and fail the statement with a check_violation
 *   naming `payment_allocations_minor_units`.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE currency_minor_units (
      code char(3) PRIMARY KEY,
      digits smallint NOT NULL CONSTRAINT currency_minor_units_digits_check CHECK (digits BETWEEN 0 AND 4)
    );
  `);
  const rows = isoCurrencyCodes().map((code) => ({ code, digits: currencyMinorUnits(code) }));
  for (let i = 0; i < rows.length; i += 500) await knex('currency_minor_units').insert(rows.slice(i, i + 500));
  await knex.raw(`
    CREATE FUNCTION currency_minor_units(code text) RETURNS integer LANGUAGE sql STABLE
      SET search_path FROM CURRENT
      AS $fn$ SELECT COALESCE((SELECT digits FROM currency_minor_units WHERE currency_minor_units.code = upper(btrim($1))), 2) $fn$;

    CREATE FUNCTION payment_allocations_check_minor_units() RETURNS trigger LANGUAGE plpgsql
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

    CREATE TRIGGER payment_allocations_minor_units_insert AFTER INSERT ON payment_allocations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION payment_allocations_check_minor_units();
    CREATE TRIGGER payment_allocations_minor_units_update AFTER UPDATE ON payment_allocations
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION payment_allocations_check_minor_units();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS payment_allocations_minor_units_update ON payment_allocations;
    DROP TRIGGER IF EXISTS payment_allocations_minor_units_insert ON payment_allocations;
    DROP FUNCTION IF EXISTS payment_allocations_check_minor_units();
    DROP FUNCTION IF EXISTS currency_minor_units(text);
    DROP TABLE IF EXISTS currency_minor_units;
  `);
}
