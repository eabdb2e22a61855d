/** What the admin service's route handlers receive (database, Temporal client, config, keys, storage, template pool), and its typed `route` helper. */
import type { Client } from '@temporalio/client';
import { routeFor, type Db, type ObjectStorage, type TemplatePool } from '@rp/platform';
import type { AdminConfig } from './config.js';
import type { UserReads } from './domain/user-reads.js';

export interface AdminDeps {
  db: Db;
  temporal: Client;
  config: AdminConfig;
  /** key user-invite tokens are derived with (domain/invites.ts) */
  inviteTokenKey: Buffer;
  /** Object storage (attachments); null when S3_ENDPOINT is not configured. */
  storage: ObjectStorage | null;
  /** Liquid renders (previews, save checks) run on these worker threads, never on the event loop. */
  templates: TemplatePool;
  /** This API process's cache of user details (GET /v2/users/me, /v2/users/{id}); null when USER_READ_CACHE_TTL_MS is 0. */
  userReads: UserReads | null;
}

export const route = routeFor<AdminDeps>();
