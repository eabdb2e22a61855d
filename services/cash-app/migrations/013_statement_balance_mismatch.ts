import type { Knex } from 'knex';

export const name = '013_statement_balance_mismatch';

/**
 * What an upload learns from a file that a statement keeps:
 *
 * - `balance_difference`: closing balance − (opening balance + the statement's entries) in the
 *   statement's currency, where the file's balances do not reconcile (real bank files do this: a
 *   booked entry dated the next day missing from the closing balance). NULL when they reconcile or
 *   cannot be checked; never 0. Such a statement is imported, and approved only with the mismatch
 *   acknowledged: `balance_mismatch_acknowledged_by` / `_at` are set by that approval, and an approved
 *   statement with a difference always has them (constraint).
 * - `skipped_not_booked`: entries of the file not imported because they are not booked (camt.053/054
 *   `Sts` other than BOOK: pending, information only).
 * - `parsed_statement`: the statement as the upload parsed it (JSON: account, ids, lines), so processing does
 *   not parse the file again (once per statement of a multi-statement file); cleared once the lines are
 *   stored and the statement is ready. NULL for statements stored before (processing then reads the file).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statements
      ADD COLUMN balance_difference numeric(20, 4)
        CONSTRAINT bank_statements_balance_difference_check CHECK (balance_difference <> 0),
      ADD COLUMN balance_mismatch_acknowledged_by uuid,
      ADD COLUMN balance_mismatch_acknowledged_at timestamptz,
      ADD COLUMN skipped_not_booked integer NOT NULL DEFAULT 0
        CONSTRAINT bank_statements_skipped_not_booked_check CHECK (skipped_not_booked >= 0),
      ADD COLUMN parsed_statement jsonb,
      ADD CONSTRAINT bank_statements_mismatch_acknowledged_check
        CHECK (status <> 'approved' OR balance_difference IS NULL OR balance_mismatch_acknowledged_at IS NOT NULL);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statements
      DROP CONSTRAINT bank_statements_mismatch_acknowledged_check,
      DROP COLUMN parsed_statement,
      DROP COLUMN skipped_not_booked,
      DROP COLUMN balance_mismatch_acknowledged_at,
      DROP COLUMN balance_mismatch_acknowledged_by,
      DROP COLUMN balance_difference;
  `);
}
