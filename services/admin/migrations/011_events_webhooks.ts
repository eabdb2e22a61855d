import type { Knex } from 'knex';
import { createEventsTable, dropEventsTable } from '@rp/platform';

export const name = '011_events_webhooks';

/**
 * Admin's own events (transactional outbox, kernel events/table.ts), and outbound webhooks:
 * - `webhook_endpoints`: an organization's receivers. The signing secret is sealed (kernel
 *   secrets.ts, aad `webhook-endpoint:<id>`); after a rotation the previous secret still signs until
 *   `previous_secret_expires_at`. `failing_since` is the first failed attempt since the last success
 *   (an endpoint failing continuously for 3 days is disabled, `disabled_reason`).
 * - `webhook_deliveries`: one row per (endpoint, event). `seq` is the order deliveries were queued in,
 *   which is the order their events were recorded; `resource_key` (`<resource type>:<id>`) ties the
 *   deliveries of one resource, delivered to an endpoint one after another in `seq` order.
 * - `webhook_dispatch_cursors`: per event source (service schema), the last event queued (kernel
 *   events/read.ts, readEventsAfter).
 */
export async function up(knex: Knex): Promise<void> {
  await createEventsTable(knex);
  await knex.raw(`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL CHECK (cardinality(events) > 0),
      description text,
      is_enabled boolean NOT NULL DEFAULT true,
      secret_enc text NOT NULL,
      previous_secret_enc text,
      previous_secret_expires_at timestamptz,
      disabled_reason text,
      disabled_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_endpoints_org_idx ON webhook_endpoints (organization_id, created_at, id);

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      organization_id uuid NOT NULL,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      event_id uuid NOT NULL,
      event_source text NOT NULL,
      event_type text NOT NULL,
      resource_key text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT webhook_deliveries_endpoint_event_key UNIQUE (endpoint_id, event_id),
      CONSTRAINT webhook_deliveries_pending_has_next CHECK (status <> 'pending' OR next_attempt_at IS NOT NULL)
    );
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_resource_idx ON webhook_deliveries (endpoint_id, resource_key, seq) WHERE status = 'pending';
    CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
    CREATE INDEX webhook_deliveries_created_idx ON webhook_deliveries (created_at);

    CREATE TABLE webhook_dispatch_cursors (
      source text PRIMARY KEY,
      txid xid8 NOT NULL,
      seq bigint NOT NULL,
      modified_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS webhook_dispatch_cursors; DROP TABLE IF EXISTS webhook_deliveries; DROP TABLE IF EXISTS webhook_endpoints;`);
  await dropEventsTable(knex);
}
