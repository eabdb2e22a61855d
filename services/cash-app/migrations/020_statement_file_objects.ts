import type { Knex } from 'knex';

export const name = '020_statement_file_objects';

/**
 * An uploaded statement file is kept in object storage (`object_key`), streamed there while the
 * request arrives, instead of as bytes in its row; files stored before, and uploads of a service
 * without object storage, keep their bytes in `content`. Each file has exactly one of the two.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statement_files
      ADD COLUMN object_key text,
      ALTER COLUMN content DROP NOT NULL,
      ADD CONSTRAINT bank_statement_files_bytes_check CHECK ((content IS NULL) <> (object_key IS NULL));
  `);
}
