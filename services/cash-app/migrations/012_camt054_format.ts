import type { Knex } from 'knex';

export const name = '012_camt054_format';

/**
 * camt.054 debit/credit notifications are a statement format of their own (`camt054`): the format
 * check of bank_statements admits it. Down: only while no camt054 statement is stored (they would
 * violate the old check; delete them first).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statements DROP CONSTRAINT bank_statements_format_check;
    ALTER TABLE bank_statements ADD CONSTRAINT bank_statements_format_check
      CHECK (format IN ('camt053', 'camt054', 'bai2', 'mt940', 'csv', 'json'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statements DROP CONSTRAINT bank_statements_format_check;
    ALTER TABLE bank_statements ADD CONSTRAINT bank_statements_format_check
      CHECK (format IN ('camt053', 'bai2', 'mt940', 'csv', 'json'));
  `);
}
