import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '003_files_extraction_jobs';

// Frozen copies of the enums as of this migration: a later change to the domain lists needs its own migration.
const COLLECTIONS = ['cash_application', 'collections', 'company', 'credit_risk', 'deductions', 'disputes', 'payments'];
const JOB_STATUSES = ['pending', 'extracting', 'deduping', 'enriching', 'synthesizing', 'complete', 'failed'];
const KNOWLEDGE_TYPES = ['declarative', 'document', 'procedural'];

/**
 * Knowledge files and extraction jobs (spec 2.10):
 * - files: an upload's declaration (name, type, size, object key) and its server-side verification
 *   (size, sha256 of the bytes, type sniffed from them);
 * - extraction_jobs: the job of spec 2.10 with its status, per-stage progress and counters;
 * - memories: the extracting stage's durable output, unique per (job, key) so a retried activity
 *   inserts nothing twice; the deduping stage marks duplicates on them (`duplicate_of_*`), the
 *   enriching stage fills scope and normalised entities (`enriched_at`). Proposals (the synthesizing
 *   stage's output) are unique per (extraction_id, item_key) (migration 002).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('files', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('name').notNullable();
    t.text('mime_type').notNullable();
    t.integer('size').notNullable(); // at most 50 MB
    t.text('bucket').notNullable();
    t.text('object_key').notNullable().unique();
    t.text('uploaded_by');
    t.boolean('is_verified').notNullable().defaultTo(false);
    t.text('sha256');
    t.text('sniffed_mime_type');
    t.text('verification_error');
    t.timestamp('verified_at', { useTz: true });
    timestamps(t, knex);
    t.index(['organization_id', 'id'], 'files_org_idx');
  });

  await knex.schema.createTable('extraction_jobs', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.uuid('file_id').references('id').inTable('files').onDelete('RESTRICT');
    t.text('created_by').notNullable();
    t.text('collection').checkIn(COLLECTIONS, 'extraction_jobs_collection_check');
    t.text('extraction_type').notNullable().checkIn(['file', 'onboarding', 'synthesis'], 'extraction_jobs_type_check');
    t.text('status').notNullable().defaultTo('pending').checkIn(JOB_STATUSES, 'extraction_jobs_status_check');
    t.text('error');
    t.jsonb('progress').notNullable().defaultTo('{}');
    for (const c of ['input_count', 'processed_count', 'memory_count', 'dedup_count', 'knowledge_count', 'proposal_count']) {
      t.integer(c).notNullable().defaultTo(0);
    }
    t.text('workflow_id').notNullable();
    t.timestamp('completed_at', { useTz: true });
    timestamps(t, knex);
    t.index(['organization_id', 'created_at'], 'extraction_jobs_org_created_idx');
    t.index(['file_id'], 'extraction_jobs_file_idx');
  });

  await knex.schema.createTable('memories', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.uuid('extraction_id').notNullable().references('id').inTable('extraction_jobs').onDelete('CASCADE');
    t.text('key').notNullable();
    t.integer('seq').notNullable();
    t.text('text').notNullable();
    t.text('excerpt').notNullable();
    t.integer('page').notNullable();
    t.integer('start_offset').notNullable();
    t.integer('end_offset').notNullable();
    t.text('knowledge_type').notNullable().checkIn(KNOWLEDGE_TYPES, 'memories_knowledge_type_check');
    t.text('text_hash').notNullable();
    // deduping
    t.text('duplicate_of_kind').checkIn(['draft', 'memory', 'article'], 'memories_duplicate_kind_check');
    t.text('duplicate_of_id');
    t.text('dedup_reason').checkIn(['exact', 'near'], 'memories_dedup_reason_check');
    t.timestamp('deduped_at', { useTz: true });
    // enriching
    t.uuid('customer_id');
    t.uuid('segment_id');
    t.text('collection').checkIn(COLLECTIONS, 'memories_collection_check');
    t.jsonb('entities');
    t.timestamp('enriched_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['extraction_id', 'key'], { indexName: 'memories_extraction_key_unique' });
    t.index(['organization_id', 'collection'], 'memories_org_collection_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['memories', 'extraction_jobs', 'files']) await knex.schema.dropTableIfExists(table);
}
