import type { Knex } from 'knex';

export const name = '011_statement_files';

/**
 * One uploaded file can hold several statements (a month of daily MT940 statements, a CAMT message
 * with several `Stmt`, a BAI2 file with several accounts); each is its own bank_statements row.
 *
 * - `bank_statement_files` keeps the file once (its bytes and SHA-256); the same file is imported once
 *   per organization (unique hash: a second upload is refused with 409 naming its statements, and two
 *   concurrent uploads are settled by the index). The row goes when the last of its statements is deleted.
 * - `bank_statements.file_id` / `file_position` name the file and the statement's position in it
 *   (1-based); the processing activity re-reads the file and takes that statement. Statements stored
 *   before keep their bytes in `bank_statements.content` (file_id NULL, position 1).
 * - `encoding`: the character encoding the file was read in (given `charset` or detected);
 *   `warnings`: what the upload noticed but could not decide (JSON array of strings).
 * - The file hash stays on every statement of the file (the API's `file_sha256`), so the unique
 *   index on it now includes the position.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE bank_statement_files (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      file_sha256 text NOT NULL,
      content bytea NOT NULL,
      statement_count integer NOT NULL CONSTRAINT bank_statement_files_count_check CHECK (statement_count >= 1),
      created_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT bank_statement_files_org_sha_uq UNIQUE (organization_id, file_sha256)
    );
    ALTER TABLE bank_statements
      ADD COLUMN file_id uuid REFERENCES bank_statement_files (id) ON DELETE RESTRICT,
      ADD COLUMN file_position integer NOT NULL DEFAULT 1 CONSTRAINT bank_statements_file_position_check CHECK (file_position >= 1),
      ADD COLUMN encoding text,
      ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]'::jsonb;
    DROP INDEX bank_statements_org_file_uq;
    CREATE UNIQUE INDEX bank_statements_org_file_position_uq ON bank_statements (organization_id, file_sha256, file_position) WHERE file_sha256 IS NOT NULL;
    CREATE INDEX bank_statements_file_idx ON bank_statements (file_id) WHERE file_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE bank_statements s SET content = f.content FROM bank_statement_files f WHERE f.id = s.file_id;
    -- later statements of a multi-statement file keep their bytes but no longer claim the file hash
    UPDATE bank_statements SET file_sha256 = NULL WHERE file_position > 1;
    DROP INDEX bank_statements_file_idx;
    DROP INDEX bank_statements_org_file_position_uq;
    CREATE UNIQUE INDEX bank_statements_org_file_uq ON bank_statements (organization_id, file_sha256) WHERE file_sha256 IS NOT NULL;
    ALTER TABLE bank_statements DROP COLUMN file_id, DROP COLUMN file_position, DROP COLUMN encoding, DROP COLUMN warnings;
    DROP TABLE bank_statement_files;
  `);
}
