import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '001_ledger_accounts_adjustments';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ledger_accounts', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('name').notNullable();
    t.text('number').notNullable();
    t.text('classification').notNullable().checkIn(['asset', 'liability', 'equity', 'revenue', 'expense'], 'ledger_accounts_classification_check');
    timestamps(t, knex);
    t.unique(['organization_id', 'number'], { indexName: 'ledger_accounts_org_number_uq' });
    // Target of the adjustments' (organization_id, ledger_account_id) key: an adjustment can only use its own organization's accounts.
    t.unique(['organization_id', 'id'], { indexName: 'ledger_accounts_org_id_uq' });
  });

  await knex.schema.createTable('adjustments', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable();
    t.text('name').notNullable();
    t.text('description');
    t.boolean('is_active').notNullable().defaultTo(true);
    t.boolean('is_system').notNullable().defaultTo(false);
    t.boolean('automated').notNullable().defaultTo(false);
    t.text('system_key');
    t.uuid('ledger_account_id').notNullable();
    timestamps(t, knex);
    t.foreign(['organization_id', 'ledger_account_id'], 'adjustments_ledger_account_fk')
      .references(['organization_id', 'id'])
      .inTable('ledger_accounts')
      .onDelete('RESTRICT');
    t.index(['organization_id', 'name', 'id'], 'adjustments_org_name_idx');
    t.index(['ledger_account_id'], 'adjustments_ledger_account_idx');
  });
  await knex.raw('CREATE UNIQUE INDEX adjustments_org_system_key_uq ON adjustments (organization_id, system_key) WHERE system_key IS NOT NULL');
  // System adjustments, and only they, carry a system key.
  await knex.raw('ALTER TABLE adjustments ADD CONSTRAINT adjustments_system_key_check CHECK ((system_key IS NOT NULL) = is_system)');
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['adjustments', 'ledger_accounts']) {
    await knex.schema.dropTableIfExists(table);
  }
}
