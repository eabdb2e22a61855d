import type { Knex } from 'knex';

export const name = '002_connections';

/**
 * Connections to external systems, their synced models and the sync runs (spec 2.2).
 * - `settings` holds the provider's non-secret settings (base_url, tenant, realm_id, …).
 * - `secrets` holds the provider credentials (OAuth tokens, API keys, passwords) as one
 *   AES-256-GCM envelope; it is never returned or logged.
 * - `sync_cursor` on a model is where the next incremental sync starts (the last completed run's
 *   timerange_end).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE connections (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      business_unit_id uuid,
      provider_name text NOT NULL,
      name text NOT NULL,
      owner_id uuid,
      settings jsonb NOT NULL DEFAULT '{}'::jsonb,
      secrets text,
      oauth_state_nonce text,
      is_authentication_pending boolean NOT NULL DEFAULT true,
      is_running_setup boolean NOT NULL DEFAULT false,
      is_sync_disabled boolean NOT NULL DEFAULT false,
      health jsonb,
      linked_integration_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX connections_org_idx ON connections (organization_id, created_at, id);

    CREATE TABLE connection_models (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      connection_id uuid NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      name text NOT NULL,
      display_name text NOT NULL,
      is_read_enabled boolean NOT NULL DEFAULT true,
      is_write_enabled boolean NOT NULL DEFAULT false,
      is_custom_object boolean NOT NULL DEFAULT false,
      is_file_upload_enabled boolean NOT NULL DEFAULT false,
      is_webhooks_setup boolean NOT NULL DEFAULT false,
      is_read_supported boolean NOT NULL DEFAULT true,
      is_write_supported boolean NOT NULL DEFAULT false,
      is_sync_supported boolean NOT NULL DEFAULT true,
      sync_cursor timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT connection_models_connection_name_uq UNIQUE (connection_id, name)
    );

    CREATE TABLE sync_runs (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      connection_id uuid NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      model_id uuid NOT NULL REFERENCES connection_models (id) ON DELETE CASCADE,
      entity_id text,
      file_id text,
      status text NOT NULL DEFAULT 'scheduled'
        CONSTRAINT sync_runs_status_check CHECK (status IN ('scheduled', 'running', 'completed', 'failed', 'cancelled')),
      attempt integer NOT NULL DEFAULT 0,
      batch_id uuid NOT NULL,
      is_initial_sync boolean NOT NULL DEFAULT false,
      is_one_off boolean NOT NULL DEFAULT false,
      pagination_state jsonb,
      timerange_start timestamptz,
      timerange_end timestamptz,
      started_at timestamptz,
      completed_at timestamptz,
      error text,
      records_synced integer NOT NULL DEFAULT 0,
      workflow_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX sync_runs_connection_idx ON sync_runs (connection_id, created_at DESC, id DESC);
    CREATE INDEX sync_runs_model_idx ON sync_runs (model_id, created_at DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS sync_runs, connection_models, connections');
}
