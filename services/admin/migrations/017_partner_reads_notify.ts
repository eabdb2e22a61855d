import type { Knex } from 'knex';
import { createPartnerReadsTriggers, dropPartnerReadsTriggers } from '@rp/platform';

export const name = '017_partner_reads_notify';

/**
 * Admin's tables that a partner detail (GET /v2/partners/{id}, served and cached per process by
 * integrations) reads announce their changes on the partner reads' channel (the kernel's
 * conditions/partner-reads.ts): the organization (its timezone makes "today", its base currency the
 * sums), its tags and hand tagging, and out-of-office periods (the effective assignee, through
 * `coverage_today`).
 */
const TABLES = [
  { table: 'organizations', organizationColumn: 'id' },
  { table: 'tags', organizationColumn: 'organization_id' },
  { table: 'tag_partners', organizationColumn: 'organization_id' },
  { table: 'user_ooo', organizationColumn: 'organization_id' },
];

export async function up(knex: Knex): Promise<void> {
  await createPartnerReadsTriggers(knex, TABLES);
}

export async function down(knex: Knex): Promise<void> {
  await dropPartnerReadsTriggers(knex, TABLES);
}
