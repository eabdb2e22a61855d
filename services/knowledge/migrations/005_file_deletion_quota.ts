import type { Knex } from 'knex';

export const name = '005_file_deletion_quota';

/**
 * Deleting knowledge files and the per-organization storage quota:
 * - files.deleted_at: a file being deleted (its row is hidden from every read while the object is
 *   removed from storage; the row goes once the object is gone, so a retried DELETE finishes the job);
 * - extraction_jobs.file_id is set null when its file is deleted: an ended job keeps its history
 *   (counters, memories, proposals) without the file;
 * - files.size is positive (what the quota sums); files(organization_id) indexes that sum.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('files', (t) => {
    t.timestamp('deleted_at', { useTz: true });
    t.check('size > 0', [], 'files_size_positive');
  });
  await knex.raw('ALTER TABLE extraction_jobs DROP CONSTRAINT IF EXISTS extraction_jobs_file_id_foreign');
  await knex.raw('ALTER TABLE extraction_jobs ADD CONSTRAINT extraction_jobs_file_id_foreign FOREIGN KEY (file_id) REFERENCES files(id) ON DELETE SET NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE extraction_jobs DROP CONSTRAINT IF EXISTS extraction_jobs_file_id_foreign');
  await knex.raw('ALTER TABLE extraction_jobs ADD CONSTRAINT extraction_jobs_file_id_foreign FOREIGN KEY (file_id) REFERENCES files(id) ON DELETE RESTRICT');
  await knex.schema.alterTable('files', (t) => {
    t.dropChecks(['files_size_positive']);
    t.dropColumn('deleted_at');
  });
}
