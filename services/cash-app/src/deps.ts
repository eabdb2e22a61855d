import type { Client } from '@temporalio/client';
import { routeFor, type Db, type ObjectStorage } from '@rp/platform';
import type { CashAppConfig } from './config.js';

export interface CashAppDeps {
  db: Db;
  temporal: Client;
  config: CashAppConfig;
  /** object storage (S3_ENDPOINT), null when not configured: links the files of advice read from email */
  storage: ObjectStorage | null;
}

export const route = routeFor<CashAppDeps>();
