/**
 * The `events` table every service schema holds: its transactional outbox. A row is written in the
 * same transaction as the change it reports (record.ts), so an event exists exactly when its change
 * committed. `txid` (the writing transaction's id) and `seq` give the order delivery reads them in
 * (read.ts): a reader takes only rows of transactions older than every transaction still running,
 * so a row that commits late is never skipped.
 *
 * `data` and `previous_attributes` are `json`, not `jsonb`: the resource is kept as the API wrote it
 * (key order included), and a webhook body is assembled from that text without re-serialising.
 */
import type { Knex } from 'knex';

export async function createEventsTable(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE events (
      id uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      txid xid8 NOT NULL DEFAULT pg_current_xact_id(),
      organization_id uuid NOT NULL,
      business_unit_id uuid,
      type text NOT NULL,
      resource_type text NOT NULL,
      resource_id text NOT NULL,
      data json NOT NULL,
      previous_attributes json,
      target_endpoint_id uuid,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX events_org_created_idx ON events (organization_id, created_at DESC, id DESC);
    CREATE INDEX events_txid_seq_idx ON events (txid, seq);
    CREATE INDEX events_created_idx ON events (created_at);
  `);
}

export async function dropEventsTable(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS events`);
}
