import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '004_article_versions_search_deduction_knowledge';

// Frozen copies of the enums as of this migration: a later change to the domain lists needs its own migration.
const COLLECTIONS = ['cash_application', 'collections', 'company', 'credit_risk', 'deductions', 'disputes', 'payments'];
const OPERATIONS = [
  'identify_document_customer', 'classify_document_type', 'parse_backup', 'parse_remittance', 'assign_deduction_reason_code',
  'assign_line_item_reason_codes', 'match_inventory', 'match_vendor', 'match_claims_and_deductions', 'generate_credit_memo', 'generate_alerts',
];

/**
 * Review of proposals into versioned articles, article search, deduction knowledge (spec 2.7, 2.11, 2.12):
 * - article_versions: one row per change of an article (`create`, `revise`, `archive`) with the
 *   content, title, description, scope and source excerpts of that version; `articles.version` is the
 *   latest version number. Articles that exist already get their version 1 here.
 * - articles.search_vector: a generated tsvector (title weight A, description B, content C, English
 *   configuration) with a GIN index, for websearch_to_tsquery / ts_rank_cd search.
 * - deduction_knowledge (spec 2.7, rule 4.3.7): per organization one global entry per operation and
 *   one customer entry per partner and operation.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('article_versions', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.uuid('article_id').notNullable().references('id').inTable('articles').onDelete('CASCADE');
    t.integer('version').notNullable();
    t.text('action').notNullable().checkIn(['create', 'revise', 'archive'], 'article_versions_action_check');
    t.text('collection').notNullable().checkIn(COLLECTIONS, 'article_versions_collection_check');
    t.text('title').notNullable();
    t.text('description');
    t.text('content').notNullable();
    t.text('knowledge_type').checkIn(['declarative', 'document', 'procedural'], 'article_versions_knowledge_type_check');
    t.uuid('customer_id');
    t.uuid('segment_id');
    t.jsonb('source_excerpts').notNullable().defaultTo('[]');
    t.uuid('proposal_id').references('id').inTable('proposals').onDelete('SET NULL');
    t.text('created_by');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['article_id', 'version'], { indexName: 'article_versions_article_version_unique' });
  });
  await knex.raw('ALTER TABLE article_versions ADD CONSTRAINT article_versions_version_check CHECK (version >= 1)');
  // Articles written before versions existed: their current state becomes their version 1.
  await knex.raw(
    `INSERT INTO article_versions (id, organization_id, article_id, version, action, collection, title, description, content,
                                   knowledge_type, customer_id, segment_id, created_at)
     SELECT gen_random_uuid(), organization_id, id, version, 'create', collection, title, description, content,
            knowledge_type, customer_id, segment_id, created_at
       FROM articles`,
  );

  await knex.raw(
    `ALTER TABLE articles ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
       setweight(to_tsvector('english'::regconfig, coalesce(title, '')), 'A') ||
       setweight(to_tsvector('english'::regconfig, coalesce(description, '')), 'B') ||
       setweight(to_tsvector('english'::regconfig, content), 'C')
     ) STORED`,
  );
  // Search ranks every hit (ts_rank_cd reads the whole vector): keep the vector in the row (compressed)
  // rather than in the TOAST table, where each hit costs a TOAST index look-up; the content moves out first.
  await knex.raw('ALTER TABLE articles ALTER COLUMN search_vector SET STORAGE MAIN');
  // lz4 decompresses several times faster than pglz; a server built without lz4 keeps pglz.
  await knex.raw(`DO $$ BEGIN
      ALTER TABLE articles ALTER COLUMN search_vector SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN NULL;
    END $$`);
  await knex.raw('CREATE INDEX articles_search_idx ON articles USING gin (search_vector)');
  await knex.raw('CREATE INDEX articles_org_created_idx ON articles (organization_id, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX proposals_org_created_idx ON proposals (organization_id, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX proposals_article_idx ON proposals (article_id) WHERE article_id IS NOT NULL');

  await knex.schema.createTable('deduction_knowledge', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('operation').notNullable().checkIn(OPERATIONS, 'deduction_knowledge_operation_check');
    t.text('scope').notNullable().checkIn(['global', 'customer'], 'deduction_knowledge_scope_check');
    t.uuid('partner_id');
    t.text('content');
    timestamps(t, knex);
  });
  await knex.raw(`ALTER TABLE deduction_knowledge ADD CONSTRAINT deduction_knowledge_scope_partner_check CHECK ((scope = 'customer') = (partner_id IS NOT NULL))`);
  await knex.raw('CREATE UNIQUE INDEX deduction_knowledge_global_uq ON deduction_knowledge (organization_id, operation) WHERE partner_id IS NULL');
  await knex.raw('CREATE UNIQUE INDEX deduction_knowledge_customer_uq ON deduction_knowledge (organization_id, partner_id, operation) WHERE partner_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('deduction_knowledge');
  await knex.raw('DROP INDEX IF EXISTS proposals_article_idx');
  await knex.raw('DROP INDEX IF EXISTS proposals_org_created_idx');
  await knex.raw('DROP INDEX IF EXISTS articles_org_created_idx');
  await knex.raw('ALTER TABLE articles DROP COLUMN IF EXISTS search_vector');
  await knex.schema.dropTableIfExists('article_versions');
}
