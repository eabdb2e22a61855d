import type { Knex } from 'knex';

export const name = '016_credit_memo_allocations';

/**
 * Credit memos in a payment's allocations.
 *
 * - `payment_allocations.document_kind`: what the allocated ledger document is, `invoice` or
 *   `credit_memo` (recorded from the ledger when the allocation is written). A credit-memo
 *   allocation applies the memo's credit: `amount_paid` is the credit applied (> 0), and it takes
 *   no discount, withholding or adjustment.
 * - The cash of a payment is what its invoice allocations pay less the credit its memo allocations
 *   apply; a statement (insert, update or delete) that leaves a payment's cash below 0 or above the
 *   payment's amount (the deposit) is refused (`payment_allocations_cash_within_amount`, checked once per statement so a
 *   replacement of a payment's allocations is judged as a whole).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_allocations
      ADD COLUMN document_kind text NOT NULL DEFAULT 'invoice'
        CONSTRAINT payment_allocations_document_kind_check CHECK (document_kind IN ('invoice', 'credit_memo')),
      ADD CONSTRAINT payment_allocations_credit_memo_check CHECK (
        document_kind = 'invoice'
        OR (amount_paid > 0 AND amount_discount = 0 AND amount_withheld = 0 AND adjustment_amount = 0 AND adjustment_id IS NULL));

    CREATE FUNCTION payment_allocations_check_cash() RETURNS trigger LANGUAGE plpgsql
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

    CREATE TRIGGER payment_allocations_cash_insert AFTER INSERT ON payment_allocations
      REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION payment_allocations_check_cash();
    CREATE TRIGGER payment_allocations_cash_update AFTER UPDATE ON payment_allocations
      REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION payment_allocations_check_cash();
    -- removing an invoice allocation must not leave a memo's credit without the cash it reduces
    CREATE TRIGGER payment_allocations_cash_delete AFTER DELETE ON payment_allocations
      REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION payment_allocations_check_cash();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER IF EXISTS payment_allocations_cash_delete ON payment_allocations;
    DROP TRIGGER IF EXISTS payment_allocations_cash_update ON payment_allocations;
    DROP TRIGGER IF EXISTS payment_allocations_cash_insert ON payment_allocations;
    DROP FUNCTION IF EXISTS payment_allocations_check_cash();
    ALTER TABLE payment_allocations
      DROP CONSTRAINT IF EXISTS payment_allocations_credit_memo_check,
      DROP COLUMN IF EXISTS document_kind;
  `);
}
