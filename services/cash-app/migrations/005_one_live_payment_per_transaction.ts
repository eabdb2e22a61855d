import type { Knex } from 'knex';

export const name = '005_one_live_payment_per_transaction';

/**
 * A bank transaction has at most one live payment (proposed `unapproved` or `approved`): enforced by
 * the database, not only by the code that proposes and creates payments under a lock. The index is
 * partial so that a status added later for a payment that no longer counts (reversed, voided) can
 * leave its row in place next to a new live payment of the same transaction.
 *
 * Fails if an organization already has two live payments for one transaction: such data is a defect
 * to be resolved by hand (which of the two payments is the real one), never silently here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE UNIQUE INDEX payments_bank_transaction_live_uq ON payments (bank_transaction_id) WHERE status IN ('unapproved', 'approved');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS payments_bank_transaction_live_uq`);
}
