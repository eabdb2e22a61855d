/**
 * How a cached partner detail (GET /v2/partners/{id}, partner-detail.ts) learns that its answer
 * changed: the database announces it. Every table the detail reads carries statement-level AFTER
 * triggers (created by the owning service's migration with `createPartnerReadsTriggers`) that send
 * the organization id of each organization the statement touched on PARTNER_READS_CHANNEL, and '*'
 * on TRUNCATE. Whoever writes (an API, a worker, a sync, SQL by hand) is announced on commit, without
 * each writer having to remember it; NOTIFY deduplicates identical payloads within a transaction, so a
 * bulk push announces each organization once.
 *
 * The tables, from the SQL the detail runs (partner-detail.ts, compiler.ts AGGREGATE_SQL/ORG_CTE,
 * language.ts FIELDS, admin's `coverage_today` view):
 *   integrations.partners, integrations.documents: the partner, its figures, the `currency` field;
 *   admin.organizations: today's date (timezone) and the base currency (its `id` is the organization);
 *   admin.tags, admin.tag_partners: the tags carried (rules and hand tagging);
 *   admin.user_ooo: the effective assignee, through `coverage_today` (which joins organizations).
 */
import type { Knex } from 'knex';
import type { ChangeChannel } from '../auth/change-channel.js';

export const PARTNER_READS_CHANNEL = 'rp_partner_reads';

const MARKER = 'sync:';
const ORGANIZATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The channel's payloads: an organization id (its partners' details changed), '*' (anything may have), or a sync marker. */
export const PARTNER_READS: ChangeChannel<string> = {
  name: PARTNER_READS_CHANNEL,
  read(payload) {
    if (payload.startsWith(MARKER)) return { barrier: payload.slice(MARKER.length) };
    return ORGANIZATION_ID.test(payload) ? { change: payload.toLowerCase() } : null;
  },
  marker: (id) => `${MARKER}${id}`,
};

/**
 * In the migrating service's schema: the trigger function `notify_partner_reads` and, on each table,
 * one statement-level AFTER trigger per INSERT, UPDATE and DELETE (Postgres allows transition tables
 * only on a trigger of one event) plus one on TRUNCATE. `organizationColumn`: the table's column that
 * names the organization (`id` for the organizations table itself).
 */
export async function createPartnerReadsTriggers(knex: Knex, tables: { table: string; organizationColumn: string }[]): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION notify_partner_reads() RETURNS trigger LANGUAGE plpgsql AS $fn$
    DECLARE
      source text := CASE TG_OP
        WHEN 'INSERT' THEN format('SELECT %1$I FROM rp_new', TG_ARGV[0])
        WHEN 'DELETE' THEN format('SELECT %1$I FROM rp_old', TG_ARGV[0])
        WHEN 'UPDATE' THEN format('SELECT %1$I FROM rp_new UNION SELECT %1$I FROM rp_old', TG_ARGV[0])
      END;
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('${PARTNER_READS_CHANNEL}', '*');
      ELSE
        EXECUTE format('SELECT pg_notify(%L, o::text) FROM (SELECT DISTINCT o FROM (%s) AS r (o) WHERE o IS NOT NULL) AS s', '${PARTNER_READS_CHANNEL}', source);
      END IF;
      RETURN NULL;
    END
    $fn$`);
  for (const { table, organizationColumn } of tables) {
    const events: [string, string][] = [
      ['insert', 'INSERT ON ?? REFERENCING NEW TABLE AS rp_new'],
      ['update', 'UPDATE ON ?? REFERENCING NEW TABLE AS rp_new OLD TABLE AS rp_old'],
      ['delete', 'DELETE ON ?? REFERENCING OLD TABLE AS rp_old'],
      ['truncate', 'TRUNCATE ON ??'],
    ];
    for (const [event, on] of events) {
      await knex.raw(`CREATE TRIGGER ?? AFTER ${on} FOR EACH STATEMENT EXECUTE FUNCTION notify_partner_reads(${knex.raw('?', [organizationColumn]).toQuery()})`, [
        `${table}_partner_reads_${event}`,
        table,
      ]);
    }
  }
}

/** Undoes createPartnerReadsTriggers. */
export async function dropPartnerReadsTriggers(knex: Knex, tables: { table: string }[]): Promise<void> {
  for (const { table } of tables) {
    for (const event of ['insert', 'update', 'delete', 'truncate']) await knex.raw('DROP TRIGGER IF EXISTS ?? ON ??', [`${table}_partner_reads_${event}`, table]);
  }
  await knex.raw('DROP FUNCTION IF EXISTS notify_partner_reads()');
}
