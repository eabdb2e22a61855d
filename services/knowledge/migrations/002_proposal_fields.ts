import type { Knex } from 'knex';

export const name = '002_proposal_fields';

/**
 * The knowledge proposal's fields of spec 2.11 and what review needs:
 * - proposals: the producing job and a stable per-job key (unique together: a retried synthesizing
 *   activity inserts nothing twice), scope, type, excerpts, review fields, and the target article's
 *   version when the proposal was made (`stale` = the article has moved on since);
 * - articles: scope, type, description and a version counter bumped by every change.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('articles', (t) => {
    t.text('description');
    t.text('knowledge_type').checkIn(['declarative', 'document', 'procedural'], 'articles_knowledge_type_check');
    t.uuid('customer_id');
    t.uuid('segment_id');
    t.integer('version').notNullable().defaultTo(1);
  });
  await knex.schema.alterTable('proposals', (t) => {
    t.uuid('extraction_id');
    t.text('item_key');
    t.text('description');
    t.text('knowledge_type').checkIn(['declarative', 'document', 'procedural'], 'proposals_knowledge_type_check');
    t.uuid('article_id').references('id').inTable('articles').onDelete('SET NULL');
    t.integer('article_version');
    t.uuid('customer_id');
    t.uuid('segment_id');
    t.jsonb('source_excerpts').notNullable().defaultTo('[]');
    t.text('review_notes');
    t.timestamp('reviewed_at', { useTz: true });
    t.text('reviewed_by');
    t.unique(['extraction_id', 'item_key'], { indexName: 'proposals_extraction_item_key_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('proposals', (t) => {
    t.dropUnique(['extraction_id', 'item_key'], 'proposals_extraction_item_key_unique');
    for (const c of ['extraction_id', 'item_key', 'description', 'knowledge_type', 'article_id', 'article_version', 'customer_id', 'segment_id', 'source_excerpts', 'review_notes', 'reviewed_at', 'reviewed_by']) t.dropColumn(c);
  });
  await knex.schema.alterTable('articles', (t) => {
    for (const c of ['description', 'knowledge_type', 'customer_id', 'segment_id', 'version']) t.dropColumn(c);
  });
}
