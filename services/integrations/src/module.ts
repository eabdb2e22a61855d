import type { ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { IntegrationsConfig } from './config.js';
import type { IntegrationsDeps } from './deps.js';
import { providerRoutes } from './routes/providers.js';
import { syncRoutes } from './routes/sync.js';
import { connectionSyncActivities } from './activities/sync.js';
import { pushRoutes } from './routes/push.js';

export const integrationsModule: ServiceModule<IntegrationsConfig, IntegrationsDeps> = {
  name: 'integrations',
  schema: 'integrations',
  taskQueue: TASK_QUEUES.integrations,
  info: { title: 'Integrations service', version: '2.0.0', description: 'External systems: the provider registry; connections and syncs to come.' },
  migrations,
  routes: [...providerRoutes, ...pushRoutes, ...syncRoutes],
  deps: ({ db, temporal, config }) => ({ db, temporal: temporal.client, config }),
  activities: (b) => ({ ...connectionSyncActivities(b) }),
};
