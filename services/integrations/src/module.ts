/**
 * The integrations service module: its schema and migrations, its routes (providers, connections,
 * syncs, middleware pushes and posting queue, partners) and its activities (pull syncs, posting of
 * applied cash, the sync report).
 */
import type { ServiceModule } from '@rp/platform';
import { TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { IntegrationsConfig } from './config.js';
import type { IntegrationsDeps } from './deps.js';
import { providerRoutes } from './routes/providers.js';
import { connectionRoutes } from './routes/connections.js';
import { syncRoutes } from './routes/sync.js';
import { connectionSyncActivities } from './activities/sync.js';
import { pushRoutes } from './routes/push.js';
import { paymentPostingRoutes } from './routes/payment-postings.js';
import { paymentPostingActivities } from './activities/payment-posting.js';
import { partnerRoutes } from './routes/partners.js';
import { syncReportActivities } from './activities/reports.js';

export const integrationsModule: ServiceModule<IntegrationsConfig, IntegrationsDeps> = {
  name: 'integrations',
  schema: 'integrations',
  taskQueue: TASK_QUEUES.integrations,
  info: { title: 'Integrations service', version: '2.0.0', description: 'External systems: the provider registry, connections (OAuth, health), durable pull syncs on Temporal (QuickBooks Online), the middleware push endpoints and the posting of applied cash back to the ERP.' },
  migrations,
  routes: [...providerRoutes, ...connectionRoutes, ...pushRoutes, ...syncRoutes, ...paymentPostingRoutes, ...partnerRoutes],
  deps: ({ db, temporal, config }) => ({ db, temporal: temporal.client, config }),
  activities: (b) => ({ ...connectionSyncActivities(b), ...paymentPostingActivities(b), ...syncReportActivities(b) }),
};
