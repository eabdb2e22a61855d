/**
 * What the integrations routes and domain functions are handed (database, Temporal client, config),
 * and the route declarer bound to it.
 */
import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { IntegrationsConfig } from './config.js';

export interface IntegrationsDeps {
  db: Db;
  temporal: Client;
  config: IntegrationsConfig;
}

export const route = routeFor<IntegrationsDeps>();
