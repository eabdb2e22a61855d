import type { Client } from '@temporalio/client';
import { routeFor, type Db } from '@rp/platform';
import type { KnowledgeConfig } from './config.js';

export interface KnowledgeDeps {
  db: Db;
  temporal: Client;
  config: KnowledgeConfig;
}

export const route = routeFor<KnowledgeDeps>();
