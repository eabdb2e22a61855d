/**
 * A partner's detail (GET /v2/partners/{id}) kept per API process for the next requests: the
 * finished answer, per organization, partner and the caller's business-unit scope (a member never
 * gets an answer read for another scope, e.g. an admin's).
 *
 * The database announces every committed change to what the answer reads (triggers on the ledger's
 * partners and documents, admin's organizations, tags, hand tagging and out-of-office periods; the
 * kernel's conditions/partner-reads.ts), with the organization's id, whoever makes it: this process,
 * another API process, a worker, SQL by hand. The organization's entries are dropped when it is heard;
 * a write route of this process drops them itself once it has answered (forgettingPartnerReads), so
 * its caller's next read here never waits for the notification. An entry lives at most
 * PARTNER_READ_CACHE_TTL_MS (default 5 s): the bound on what changes with time alone (today's date
 * moves the overdue figures and the out-of-office in force).
 */
import { PARTNER_READS, ReadCache, type BusinessUnitScope, type Db, type Logger, type RouteDef } from '@rp/platform';
import type { IntegrationsDeps } from '../deps.js';
import type { PartnerDetail } from './partners.js';

/** Entries: the finished answer of GET /v2/partners/{id} (plain data, shared by every request it answers: never modified). */
export type PartnerReads = ReadCache<PartnerDetail, string>;

export async function createPartnerReads(opts: { db: Db; databaseUrl: string; log: Logger; ttlMs: number }): Promise<PartnerReads | null> {
  if (opts.ttlMs <= 0) return null;
  const cache = new ReadCache<PartnerDetail, string>({
    name: 'integrations-partner-reads',
    db: opts.db,
    databaseUrl: opts.databaseUrl,
    log: opts.log,
    ttlMs: opts.ttlMs,
    channel: PARTNER_READS,
    // the change is the organization's id; keys start with it
    stale: (_value, organizationId, key) => key.startsWith(`${organizationId}|`),
  });
  await cache.start();
  return cache;
}

/** organization | partner | scope ('*', or the caller's units sorted): ids are compared lower case, as Postgres compares uuids. */
export function partnerReadKey(organizationId: string, partnerId: string, scope: BusinessUnitScope): string {
  const units = scope === '*' ? '*' : scope.map((u) => u.toLowerCase()).sort().join(',');
  return `${organizationId.toLowerCase()}|${partnerId.toLowerCase()}|${units}`;
}

/**
 * Every write route (all but GETs) drops its organization's cached partner details once its handler
 * is done, committed or failed, before the answer leaves: whatever it wrote (an assignment, a push,
 * a posting) is then read fresh by the caller's next request to this process. One wrapper rather than
 * a call at each write site, so that a write route added later cannot forget it.
 */
export function forgettingPartnerReads(routes: RouteDef<IntegrationsDeps>[]): RouteDef<IntegrationsDeps>[] {
  return routes.map((r) =>
    r.method === 'get'
      ? r
      : {
          ...r,
          handler: async (c) => {
            try {
              return await r.handler(c);
            } finally {
              c.deps.partnerReads?.forget(c.identity.org.toLowerCase());
            }
          },
        },
  );
}
