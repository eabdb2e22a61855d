import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { AdminConfig } from './config.js';

export interface AdminDeps {
  db: Db;
  temporal: Client;
  config: AdminConfig;
  /** key user-invite tokens are derived with (domain/invites.ts) */
  inviteTokenKey: Buffer;
}

export const route = routeFor<AdminDeps>();
