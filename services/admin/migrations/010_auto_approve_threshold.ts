import type { Knex } from 'knex';

export const name = '010_auto_approve_threshold';

/**
 * `organizations.auto_approve_threshold`: payments that automatic matching proposes with a match
 * score at or above it are approved without a user (cash-app reads it through the kernel). NULL
 * (the default) is off. A score is 0..1 with 4 decimals, as cash-app stores it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE organizations
      ADD COLUMN auto_approve_threshold numeric(5, 4)
        CONSTRAINT organizations_auto_approve_threshold_check CHECK (auto_approve_threshold BETWEEN 0 AND 1);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE organizations DROP COLUMN IF EXISTS auto_approve_threshold`);
}
