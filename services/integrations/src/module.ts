import type { ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { IntegrationsConfig } from './config.js';
import type { IntegrationsDeps } from './deps.js';
import { providerRoutes } from './routes/providers.js';

export const integrationsModule: ServiceModule<IntegrationsConfig, IntegrationsDeps> = {
  name: 'integrations',
  schema: 'integrations',
  taskQueue: TASK_QUEUES.integrations,
  info: { title: 'Integrations service', version: '2.0.0', description: 'External systems: the provider registry; connections and syncs to come.' },
  migrations,
  routes: [...providerRoutes],
  deps: ({ db, temporal, config }) => ({ db, temporal: temporal.client, config }),
  // No integration activities yet; the worker polls its task queue for the workflows that will use them.
  activities: () => ({}),
};
