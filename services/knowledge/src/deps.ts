/** What the knowledge routes and domain receive: database, Temporal client, configuration and object storage. */
import type { Client } from '@temporalio/client';
import { routeFor, type Db, type ObjectStorage } from '@rp/platform';
import type { KnowledgeConfig } from './config.js';

export interface KnowledgeDeps {
  db: Db;
  temporal: Client;
  config: KnowledgeConfig;
  /** Object storage (knowledge files); null when S3_ENDPOINT is not configured. */
  storage: ObjectStorage | null;
}

export const route = routeFor<KnowledgeDeps>();
