import type { Knex } from 'knex';

export const name = '005_line_ids_and_live_payments';

/**
 * 1. A bank transaction has at most one live payment (proposed `unapproved` or `approved`): enforced by
 *    the database, not only by the code that proposes and creates payments under a lock. The index is
 *    partial so that a status added later for a payment that no longer counts (reversed, voided) can
 *    leave its row in place next to a new live payment of the same transaction. Fails if a transaction
 *    already has two live payments: such data is a defect to resolve by hand (which payment is the real
 *    one), never silently here.
 * 2. Unique import ids of lines with a bank reference were `<account>:ref:<reference>[#n]`; a bank that
 *    reuses references every day lost its later days' lines. Non-CAMT lines now use
 *    `<account>:ref:<reference>:<booking date>:<amount>[#n]` (see domain uniqueImportIds): the lines
 *    stored so far are given that form, so a file that overlaps them still stores nothing twice. (CAMT
 *    lines are now identified by the statement's Stmt/Id, which was not stored; theirs keep the old form.)
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE UNIQUE INDEX payments_bank_transaction_live_uq ON payments (bank_transaction_id) WHERE status IN ('unapproved', 'approved');
  `);
  await rewriteLegacyLineIds(knex);
}

/** Rewrites `<account>:ref:<reference>[#n]` ids of non-CAMT lines into `<account>:ref:<reference>:<date>:<amount>[#n]`. */
export async function rewriteLegacyLineIds(knex: Knex): Promise<number> {
  const res = await knex.raw(`
    WITH legacy AS (
      SELECT t.id, t.organization_id, t.statement_id, t.sequence,
             split_part(t.unique_import_id, ':ref:', 1) || ':ref:' || t.bank_reference || ':' ||
               coalesce(to_char(t.booking_date, 'YYYY-MM-DD'), to_char(t.value_date, 'YYYY-MM-DD'), '') || ':' || t.amount::text AS key
      FROM bank_transactions t JOIN bank_statements s ON s.id = t.statement_id
      WHERE s.format <> 'camt053' AND t.bank_reference IS NOT NULL AND position(':ref:' in t.unique_import_id) > 0
        AND t.unique_import_id = split_part(t.unique_import_id, ':ref:', 1) || ':ref:' || t.bank_reference || coalesce(substring(t.unique_import_id from '#[0-9]+$'), '')
    ), numbered AS (
      SELECT id, key || CASE WHEN n > 1 THEN '#' || n ELSE '' END AS new_id
      FROM (SELECT id, key, row_number() OVER (PARTITION BY organization_id, statement_id, key ORDER BY sequence, id) AS n FROM legacy) x
    )
    UPDATE bank_transactions t SET unique_import_id = numbered.new_id FROM numbered WHERE t.id = numbered.id
  `);
  return (res as { rowCount: number }).rowCount;
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS payments_bank_transaction_live_uq`);
}
