import type { Knex } from 'knex';
import { createPartnerReadsTriggers, dropPartnerReadsTriggers } from '@rp/platform';

export const name = '012_partner_reads_notify';

/**
 * The ledger tables that a partner detail (GET /v2/partners/{id}, cached per API process) reads
 * announce their changes on the partner reads' channel (the kernel's conditions/partner-reads.ts),
 * whoever writes them: pushes, syncs, cash application's postings, SQL.
 */
const TABLES = [
  { table: 'partners', organizationColumn: 'organization_id' },
  { table: 'documents', organizationColumn: 'organization_id' },
];

export async function up(knex: Knex): Promise<void> {
  await createPartnerReadsTriggers(knex, TABLES);
}

export async function down(knex: Knex): Promise<void> {
  await dropPartnerReadsTriggers(knex, TABLES);
}
