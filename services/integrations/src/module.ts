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
import { connectionSchema, invoiceSchema, syncRunSchema } from './routes/schemas.js';
import { listedPartnerSchema } from './routes/partners.js';
import { createPartnerReads, forgettingPartnerReads } from './domain/partner-reads.js';

export const integrationsModule: ServiceModule<IntegrationsConfig, IntegrationsDeps> = {
  name: 'integrations',
  schema: 'integrations',
  taskQueue: TASK_QUEUES.integrations,
  info: { title: 'Integrations service', version: '2.0.0', description: 'External systems: the provider registry, connections (OAuth, health), durable pull syncs on Temporal (QuickBooks Online), the middleware push endpoints and the posting of applied cash back to the ERP.' },
  migrations,
  // every write route drops its organization's cached partner details once it has answered (domain/partner-reads.ts)
  routes: forgettingPartnerReads([...providerRoutes, ...connectionRoutes, ...pushRoutes, ...syncRoutes, ...paymentPostingRoutes, ...partnerRoutes]),
  deps: async ({ db, temporal, config, log }) => ({
    db,
    temporal: temporal.client,
    config,
    partnerReads: await createPartnerReads({ db, databaseUrl: config.DATABASE_URL, log, ttlMs: config.PARTNER_READ_CACHE_TTL_MS }),
  }),
  closeDeps: async (deps) => {
    await deps.partnerReads?.close();
  },
  // data.object of each: the invoice (routes/schemas.ts invoiceSchema, documented there: no route
  // returns one invoice), the partner as GET /v2/partners lists it, the sync run as .../sync-runs
  // lists it, the connection as GET /v2/integrations/connections/{id} returns it.
  events: [
    { type: 'invoice.created', object: invoiceSchema },
    { type: 'invoice.updated', object: invoiceSchema, previousAttributes: true },
    { type: 'invoice.closed', object: invoiceSchema, previousAttributes: true },
    { type: 'partner.created', object: listedPartnerSchema },
    { type: 'partner.updated', object: listedPartnerSchema, previousAttributes: true },
    { type: 'connection.sync_completed', object: syncRunSchema },
    { type: 'connection.sync_failed', object: syncRunSchema },
    { type: 'connection.health_changed', object: connectionSchema, previousAttributes: true },
  ],
  activities: (b) => ({ ...connectionSyncActivities(b), ...paymentPostingActivities(b), ...syncReportActivities(b) }),
};
