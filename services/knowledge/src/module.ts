import type { ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { KnowledgeConfig } from './config.js';
import type { KnowledgeDeps } from './deps.js';
import { playbookRoutes } from './routes/playbook.js';
import { proposalRoutes } from './routes/proposals.js';
import { articleRoutes } from './routes/articles.js';
import { deductionKnowledgeRoutes } from './routes/deduction-knowledge.js';

export const knowledgeModule: ServiceModule<KnowledgeConfig, KnowledgeDeps> = {
  name: 'knowledge',
  schema: 'knowledge',
  taskQueue: TASK_QUEUES.knowledge,
  info: { title: 'Knowledge service', version: '2.0.0', description: 'Playbook knowledge for the assistant: articles, proposals, search, statistics and deduction knowledge.' },
  migrations,
  routes: [...playbookRoutes, ...proposalRoutes, ...articleRoutes, ...deductionKnowledgeRoutes],
  deps: ({ db, temporal, config }) => ({ db, temporal: temporal.client, config }),
  // No knowledge activities yet; the worker polls its task queue for the workflows that will use them.
  activities: () => ({}),
};
