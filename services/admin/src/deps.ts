import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { AdminConfig } from './config.js';

export interface AdminDeps {
  db: Db;
  temporal: Client;
  config: AdminConfig;
}

export const route = routeFor<AdminDeps>();
