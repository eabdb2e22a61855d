/**
 * What the integrations routes and domain functions are handed (database, Temporal client, config),
 * and the route declarer bound to it.
 */
import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { IntegrationsConfig } from './config.js';
import type { PartnerReads } from './domain/partner-reads.js';

export interface IntegrationsDeps {
  db: Db;
  temporal: Client;
  config: IntegrationsConfig;
  /** This API process's cache of partner details (GET /v2/partners/{id}); null when PARTNER_READ_CACHE_TTL_MS is 0. */
  partnerReads: PartnerReads | null;
}

export const route = routeFor<IntegrationsDeps>();
