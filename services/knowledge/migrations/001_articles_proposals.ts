import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '001_articles_proposals';

// Frozen copies of the enums as of this migration: a later change to the domain lists needs its own migration.
const COLLECTIONS = ['cash_application', 'collections', 'company', 'credit_risk', 'deductions', 'disputes', 'payments'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('articles', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('collection').notNullable().checkIn(COLLECTIONS, 'articles_collection_check');
    t.text('title').notNullable();
    t.text('content').notNullable().defaultTo('');
    timestamps(t, knex);
    t.timestamp('archived_at', { useTz: true });
  });
  // Statistics and listings read live (non-archived) articles of one organization by collection.
  await knex.raw('CREATE INDEX articles_org_collection_live_idx ON articles (organization_id, collection) WHERE archived_at IS NULL');

  await knex.schema.createTable('proposals', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('collection').checkIn(COLLECTIONS, 'proposals_collection_check');
    t.text('status').notNullable().defaultTo('pending').checkIn(['pending', 'approved', 'rejected'], 'proposals_status_check');
    t.text('action').notNullable().checkIn(['archive', 'create', 'revise'], 'proposals_action_check');
    t.text('title');
    t.text('content');
    timestamps(t, knex);
    t.index(['organization_id', 'status', 'collection'], 'proposals_org_status_collection_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['proposals', 'articles']) {
    await knex.schema.dropTableIfExists(table);
  }
}
