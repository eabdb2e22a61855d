import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '004_mailbox_settings_cnam';

/**
 * Mailbox settings (one row per organization, absent until configured) and caller-ID name (CNAM)
 * registrations (one per organization) with one row per submission to the registry.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mailbox_settings', (t) => {
    t.uuid('organization_id').primary().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('transport_provider').notNullable().checkIn(['oauth_sync', 'domain_send'], 'mailbox_settings_transport_check');
    t.boolean('hybrid_mode_enabled').notNullable().defaultTo(false);
    t.jsonb('microsoft').notNullable();
    t.jsonb('google').notNullable();
    t.jsonb('centralized_inbox').notNullable();
    t.text('domain_name');
    t.text('inbound_parse_hostname');
    // The domain-send API key, only ever as a kernel secrets envelope (packages/platform/src/secrets.ts).
    t.text('api_key_envelope');
    t.uuid('updated_by_user_id');
    timestamps(t, knex);
  });
  await knex.raw(`ALTER TABLE mailbox_settings ADD CONSTRAINT mailbox_settings_api_key_sealed CHECK (api_key_envelope IS NULL OR api_key_envelope ~ '^v1\\.[0-9a-f]{8}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*\\.[A-Za-z0-9_-]+$')`);
  await knex.raw(`ALTER TABLE mailbox_settings ADD CONSTRAINT mailbox_settings_threshold_check CHECK ((centralized_inbox->>'auto_assign_threshold')::int BETWEEN 0 AND 100)`);
  // Inbound mail is routed by host name: one organization per custom host.
  await knex.raw('CREATE UNIQUE INDEX mailbox_settings_inbound_host_uq ON mailbox_settings (lower(inbound_parse_hostname)) WHERE inbound_parse_hostname IS NOT NULL');

  await knex.schema.createTable('cnam_registrations', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().unique().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('status').notNullable().checkIn(['draft', 'submitted', 'in_review', 'approved', 'rejected'], 'cnam_registrations_status_check');
    t.text('status_detail');
    t.text('display_name');
    for (const c of ['legal_business_name', 'street_address', 'city', 'state', 'postal_code', 'country', 'business_type', 'business_industry', 'registration_id_type', 'registration_number']) t.text(c);
    t.specificType('regions_of_operation', 'text[]').notNullable().defaultTo('{}');
    for (const c of ['website', 'contact_first_name', 'contact_last_name', 'contact_email', 'contact_phone', 'contact_title', 'phone_number']) t.text(c);
    t.uuid('user_id').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('submitted_at', { useTz: true });
    t.timestamp('approved_at', { useTz: true });
    t.text('error_message');
    t.uuid('current_submission_id');
    timestamps(t, knex);
  });
  await knex.raw('ALTER TABLE cnam_registrations ADD CONSTRAINT cnam_registrations_display_name_check CHECK (char_length(display_name) <= 15)');
  await knex.raw(`ALTER TABLE cnam_registrations ADD CONSTRAINT cnam_registrations_approved_check CHECK ((status = 'approved') = (approved_at IS NOT NULL))`);

  await knex.schema.createTable('cnam_submissions', (t) => {
    t.uuid('id').primary();
    t.uuid('registration_id').notNullable().references('id').inTable('cnam_registrations').onDelete('CASCADE');
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('status').notNullable().checkIn(['submitted', 'in_review', 'approved', 'rejected', 'superseded'], 'cnam_submissions_status_check');
    // What was sent: the registration's fields at submission time.
    t.jsonb('payload').notNullable();
    t.uuid('submitted_by_user_id');
    t.text('adapter');
    t.text('registry_reference');
    t.timestamp('handed_over_at', { useTz: true });
    t.text('decision_detail');
    t.timestamp('decided_at', { useTz: true });
    timestamps(t, knex);
    t.index(['registration_id', 'created_at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('cnam_submissions');
  await knex.schema.dropTableIfExists('cnam_registrations');
  await knex.schema.dropTableIfExists('mailbox_settings');
}
