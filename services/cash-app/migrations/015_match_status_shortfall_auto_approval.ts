import type { Knex } from 'knex';

export const name = '015_match_status_shortfall_auto_approval';

/**
 * 1. `bank_transactions.match_status`: where a deposit stands in cash application —
 *    `approved` (its live payment is approved), `proposed` (it has an unapproved payment),
 *    `not_a_payment` (no payment, and the deposit is not a customer payment: `is_payment` false,
 *    set by the classification or by matching), `unmatched` (no payment otherwise). Debits and zero
 *    amounts are not deposits and have none (NULL): the status describes what happens to incoming
 *    money, and counting every debit as "not a payment" would bury the credits a clerk must review.
 *    The value is derived, never written by hand: a row trigger computes it on an insert that does
 *    not carry a new line's status and on every update that names `is_payment`, `amount` or
 *    `match_status` (whatever value such an update writes), and statement triggers on `payments`
 *    recompute, set-based, the transactions whose live payment appeared, changed status or went.
 *    So no code path (proposals, a manual payment, an approval, an unposting, a deletion) can leave
 *    it stale. Backfilled from the same rule. (The row trigger leaves the payments triggers' own
 *    updates alone, and looks payments up only for a line whose status says it has one, so a
 *    100,000-line statement's store, classification and proposals stay set-based.)
 * 2. `payments.shortfall_amount` / `shortfall_reason`: what a payment's invoices lack after its cash
 *    (`fee`, `discount`, `deduction`, `partial`), both NULL when the cash settles what it is
 *    allocated to. The amount is positive and exact to the payment's currency's minor units.
 * 3. `payments.auto_approved`: the current approval was given by the organization's
 *    `auto_approve_threshold`, not by a user (then `approved_by` is NULL); cleared with the approval.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_transactions ADD COLUMN match_status text;
    UPDATE bank_transactions t SET match_status = CASE
        WHEN t.amount <= 0 THEN NULL
        WHEN EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id AND p.status = 'approved') THEN 'approved'
        WHEN EXISTS (SELECT 1 FROM payments p WHERE p.bank_transaction_id = t.id AND p.status = 'unapproved') THEN 'proposed'
        WHEN t.is_payment IS FALSE THEN 'not_a_payment'
        ELSE 'unmatched' END;
    ALTER TABLE bank_transactions
      ADD CONSTRAINT bank_transactions_match_status_check
        CHECK (match_status IN ('unmatched', 'proposed', 'approved', 'not_a_payment')),
      ADD CONSTRAINT bank_transactions_match_status_deposit_check
        CHECK ((amount > 0) = (match_status IS NOT NULL));
    CREATE INDEX bank_transactions_statement_match_status_idx ON bank_transactions (statement_id, match_status);

    CREATE FUNCTION bank_transactions_set_match_status() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $fn$
    DECLARE
      live text;
    BEGIN
      IF NEW.amount <= 0 THEN
        NEW.match_status := NULL;
        RETURN NEW;
      END IF;
      -- A new line has no payment; nor has a line whose stored status says so: any change of its
      -- payments since went through payments_refresh_match_status, which wrote the status.
      IF TG_OP = 'UPDATE' AND OLD.match_status IN ('proposed', 'approved') THEN
        -- at most one live payment per transaction (payments_bank_transaction_live_uq)
        SELECT p.status INTO live FROM payments p
         WHERE p.bank_transaction_id = NEW.id AND p.status IN ('unapproved', 'approved') LIMIT 1;
        IF live = 'approved' THEN
          NEW.match_status := 'approved';
          RETURN NEW;
        ELSIF live = 'unapproved' THEN
          NEW.match_status := 'proposed';
          RETURN NEW;
        END IF;
      END IF;
      NEW.match_status := CASE WHEN NEW.is_payment IS FALSE THEN 'not_a_payment' ELSE 'unmatched' END;
      RETURN NEW;
    END $fn$;
    -- Inserts that already carry the status a new line has (insertTransactions writes it) skip the
    -- function; updates coming from the payments triggers below (trigger depth 1) write the
    -- status those computed, set-based.
    CREATE TRIGGER bank_transactions_match_status_insert BEFORE INSERT ON bank_transactions
      FOR EACH ROW
      WHEN (NEW.match_status IS DISTINCT FROM CASE WHEN NEW.amount > 0 THEN CASE WHEN NEW.is_payment IS FALSE THEN 'not_a_payment' ELSE 'unmatched' END END)
      EXECUTE FUNCTION bank_transactions_set_match_status();
    CREATE TRIGGER bank_transactions_match_status_update BEFORE UPDATE OF amount, is_payment, match_status ON bank_transactions
      FOR EACH ROW WHEN (pg_trigger_depth() = 0)
      EXECUTE FUNCTION bank_transactions_set_match_status();

    -- The match status of the transactions whose live payment appeared, changed status or went.
    CREATE FUNCTION payments_refresh_match_status() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT
      AS $fn$
    DECLARE
      ids uuid[];
    BEGIN
      IF TG_OP = 'INSERT' THEN
        -- a new live payment is the transaction's only one
        UPDATE bank_transactions t
           SET match_status = CASE WHEN n.status = 'approved' THEN 'approved' ELSE 'proposed' END
          FROM new_rows n
         WHERE t.id = n.bank_transaction_id AND t.amount > 0 AND n.status IN ('unapproved', 'approved')
           AND t.match_status IS DISTINCT FROM CASE WHEN n.status = 'approved' THEN 'approved' ELSE 'proposed' END;
        RETURN NULL;
      ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT o.bank_transaction_id) INTO ids FROM old_rows o;
      ELSE
        SELECT array_agg(DISTINCT x.id) INTO ids FROM (
          SELECT n.bank_transaction_id AS id FROM new_rows n JOIN old_rows o ON o.id = n.id
           WHERE n.status IS DISTINCT FROM o.status OR n.bank_transaction_id IS DISTINCT FROM o.bank_transaction_id
          UNION ALL
          SELECT o.bank_transaction_id FROM new_rows n JOIN old_rows o ON o.id = n.id
           WHERE n.bank_transaction_id IS DISTINCT FROM o.bank_transaction_id) x;
      END IF;
      IF ids IS NULL THEN
        RETURN NULL;
      END IF;
      UPDATE bank_transactions t SET match_status = c.match_status
        FROM (SELECT t2.id, CASE
                     WHEN t2.amount <= 0 THEN NULL
                     WHEN l.status = 'approved' THEN 'approved'
                     WHEN l.status = 'unapproved' THEN 'proposed'
                     WHEN t2.is_payment IS FALSE THEN 'not_a_payment'
                     ELSE 'unmatched' END AS match_status
                FROM bank_transactions t2
                LEFT JOIN LATERAL (SELECT p.status FROM payments p
                                    WHERE p.bank_transaction_id = t2.id AND p.status IN ('unapproved', 'approved') LIMIT 1) l ON true
               WHERE t2.id = ANY (ids)) c
       WHERE t.id = c.id AND t.match_status IS DISTINCT FROM c.match_status;
      RETURN NULL;
    END $fn$;
    CREATE TRIGGER payments_match_status_insert AFTER INSERT ON payments
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION payments_refresh_match_status();
    CREATE TRIGGER payments_match_status_update AFTER UPDATE ON payments
      REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION payments_refresh_match_status();
    CREATE TRIGGER payments_match_status_delete AFTER DELETE ON payments
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION payments_refresh_match_status();

    ALTER TABLE payments
      ADD COLUMN shortfall_amount numeric(20, 4),
      ADD COLUMN shortfall_reason text,
      ADD COLUMN auto_approved boolean NOT NULL DEFAULT false,
      ADD CONSTRAINT payments_shortfall_reason_check CHECK (shortfall_reason IN ('fee', 'discount', 'deduction', 'partial')),
      ADD CONSTRAINT payments_shortfall_pair_check CHECK ((shortfall_amount IS NULL) = (shortfall_reason IS NULL)),
      ADD CONSTRAINT payments_shortfall_amount_check
        CHECK (shortfall_amount > 0 AND shortfall_amount = round(shortfall_amount, currency_minor_units(currency))),
      ADD CONSTRAINT payments_auto_approved_check CHECK (NOT auto_approved OR (status = 'approved' AND approved_by IS NULL));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments
      DROP CONSTRAINT IF EXISTS payments_auto_approved_check,
      DROP CONSTRAINT IF EXISTS payments_shortfall_amount_check,
      DROP CONSTRAINT IF EXISTS payments_shortfall_pair_check,
      DROP CONSTRAINT IF EXISTS payments_shortfall_reason_check,
      DROP COLUMN IF EXISTS auto_approved,
      DROP COLUMN IF EXISTS shortfall_reason,
      DROP COLUMN IF EXISTS shortfall_amount;
    DROP TRIGGER IF EXISTS payments_match_status_delete ON payments;
    DROP TRIGGER IF EXISTS payments_match_status_update ON payments;
    DROP TRIGGER IF EXISTS payments_match_status_insert ON payments;
    DROP FUNCTION IF EXISTS payments_refresh_match_status();
    DROP TRIGGER IF EXISTS bank_transactions_match_status_update ON bank_transactions;
    DROP TRIGGER IF EXISTS bank_transactions_match_status_insert ON bank_transactions;
    DROP FUNCTION IF EXISTS bank_transactions_set_match_status();
    DROP INDEX IF EXISTS bank_transactions_statement_match_status_idx;
    ALTER TABLE bank_transactions
      DROP CONSTRAINT IF EXISTS bank_transactions_match_status_deposit_check,
      DROP CONSTRAINT IF EXISTS bank_transactions_match_status_check,
      DROP COLUMN IF EXISTS match_status;
  `);
}
