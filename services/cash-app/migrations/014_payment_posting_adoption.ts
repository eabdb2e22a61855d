import type { Knex } from 'knex';

export const name = '014_payment_posting_adoption';

/**
 * `payments.erp_posting_adopted`: the posting found the ERP payment stored by an earlier attempt
 * whose answer was lost (by the payment's posting key) and adopted it instead of creating a second
 * one. Only a payment the ERP holds (posted or unposting, with its ERP id) can say so.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments
      ADD COLUMN erp_posting_adopted boolean NOT NULL DEFAULT false,
      ADD CONSTRAINT payments_posting_adopted_check
        CHECK (NOT erp_posting_adopted OR (posting_status IN ('posted', 'unposting') AND erp_payment_id IS NOT NULL));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payments
      DROP CONSTRAINT IF EXISTS payments_posting_adopted_check,
      DROP COLUMN IF EXISTS erp_posting_adopted;
  `);
}
