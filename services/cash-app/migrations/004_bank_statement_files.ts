import type { Knex } from 'knex';

export const name = '004_bank_statement_files';

/**
 * The same statement file (same SHA-256) is imported once per organization: a second upload is
 * refused with 409 naming the first (the unique index also settles two concurrent uploads).
 * Statements that arrive through a bank connection have no file hash and are not constrained.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE UNIQUE INDEX bank_statements_org_file_uq ON bank_statements (organization_id, file_sha256) WHERE file_sha256 IS NOT NULL;
    CREATE INDEX bank_statements_org_status_idx ON bank_statements (organization_id, status);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS bank_statements_org_file_uq; DROP INDEX IF EXISTS bank_statements_org_status_idx`);
}
