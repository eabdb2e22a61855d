import type { Knex } from 'knex';

export const name = '005_drop_redundant_partner_index';

/**
 * Every read of documents by partner asks for open invoices or for closed invoices with their
 * dates, and 004's two partial covering indexes serve exactly those. The general
 * (organization_id, partner_id) index only cost every ledger write one more index insert on the
 * push hot path, so it goes. (Partners are never deleted, so the partner foreign key's
 * ON DELETE SET NULL does not need it either.)
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS documents_org_partner_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX IF NOT EXISTS documents_org_partner_idx ON documents (organization_id, partner_id)');
}
