import type { Knex } from 'knex';

export const name = '009_payment_posting_adoption';

/**
 * `payment_postings.erp_adopted`: the posting found the ERP payment by the payment's posting key
 * (an earlier attempt that the ERP stored but whose answer was lost) and adopted it instead of
 * creating a second one. Only a posting that holds an ERP payment can have adopted one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_postings
      ADD COLUMN erp_adopted boolean NOT NULL DEFAULT false,
      ADD CONSTRAINT payment_postings_adopted_check CHECK (NOT erp_adopted OR erp_payment_id IS NOT NULL);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE payment_postings
      DROP CONSTRAINT IF EXISTS payment_postings_adopted_check,
      DROP COLUMN IF EXISTS erp_adopted;
  `);
}
