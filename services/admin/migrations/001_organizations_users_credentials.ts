import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '001_organizations_users_credentials';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('organizations', (t) => {
    t.uuid('id').primary();
    t.text('name').notNullable();
    t.specificType('base_currency', 'char(3)').notNullable();
    t.text('timezone').notNullable();
    timestamps(t, knex);
  });

  await knex.schema.createTable('business_units', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('description');
    timestamps(t, knex);
    t.index(['organization_id', 'id']);
  });
  await knex.raw('CREATE UNIQUE INDEX business_units_org_name_uq ON business_units (organization_id, lower(name))');

  await knex.schema.createTable('users', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('name').notNullable();
    t.text('role').notNullable().checkIn(['admin', 'member'], 'users_role_check');
    t.timestamp('deactivated_at', { useTz: true });
    timestamps(t, knex);
    t.index(['organization_id', 'id']);
  });
  await knex.raw('CREATE UNIQUE INDEX users_org_email_uq ON users (organization_id, lower(email))');

  await knex.schema.createTable('user_business_units', (t) => {
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('business_unit_id').notNullable().references('id').inTable('business_units').onDelete('CASCADE');
    t.primary(['user_id', 'business_unit_id']);
    t.index(['business_unit_id']);
  });

  await knex.schema.createTable('credentials', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['user', 'api_key'], 'credentials_kind_check');
    t.uuid('user_id').references('id').inTable('users').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('token_hash').notNullable().unique();
    t.text('token_hint').notNullable();
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.uuid('created_by_user_id');
    timestamps(t, knex);
    t.index(['organization_id', 'kind']);
  });
  await knex.raw(`ALTER TABLE credentials ADD CONSTRAINT credentials_user_kind_check CHECK ((kind = 'user') = (user_id IS NOT NULL))`);

  // Outbound emails, one row per idempotency key: recorded before and after the SMTP call.
  await knex.schema.createTable('outbound_emails', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('idempotency_key').notNullable().unique();
    t.text('kind').notNullable();
    t.text('to_address').notNullable();
    t.text('subject').notNullable();
    t.text('status').notNullable().checkIn(['sending', 'sent', 'failed'], 'outbound_emails_status_check');
    t.text('message_id');
    t.integer('attempts').notNullable().defaultTo(0);
    t.text('last_error');
    t.timestamp('sent_at', { useTz: true });
    timestamps(t, knex);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['outbound_emails', 'credentials', 'user_business_units', 'users', 'business_units', 'organizations']) {
    await knex.schema.dropTableIfExists(table);
  }
}
