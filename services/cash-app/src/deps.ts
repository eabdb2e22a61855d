import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { CashAppConfig } from './config.js';

export interface CashAppDeps {
  db: Db;
  temporal: Client;
  config: CashAppConfig;
}

export const route = routeFor<CashAppDeps>();
