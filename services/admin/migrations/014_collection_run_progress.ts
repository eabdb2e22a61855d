import type { Knex } from 'knex';

export const name = '014_collection_run_progress';

/**
 * Progress of a collection run's planning, so a planning activity that a killed worker abandoned
 * resumes exactly where the last committed page ended (the heartbeat may lag a commit):
 * - `collection_runs.plan_cursor`: the last partner id whose actions are committed; written in the
 *   transaction that writes that page's actions and marks.
 * - `collection_runs.planned_at`: set when planning covered every partner (the run then only does).
 * - an index of a run's actions by customer (the actions listing's `run_id` + `partner_id` filter).
 * - an index of step marks by invoice: planning reads a page's invoices' marks under every policy
 *   (the primary key leads with the policy).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE collection_runs
      ADD COLUMN plan_cursor uuid,
      ADD COLUMN planned_at timestamptz;
    CREATE INDEX collection_actions_run_partner_idx ON collection_actions (run_id, partner_id);
    CREATE INDEX collection_step_marks_invoice_idx ON collection_step_marks (invoice_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS collection_step_marks_invoice_idx, collection_actions_run_partner_idx;
    ALTER TABLE collection_runs DROP COLUMN IF EXISTS plan_cursor, DROP COLUMN IF EXISTS planned_at;
  `);
}
