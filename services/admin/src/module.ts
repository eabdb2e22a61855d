/**
 * The admin service: organization (users, invites, out-of-office, business units, API keys,
 * mailbox settings, caller-ID name, report configs) and collections outreach (email and SMS
 * templates, tags, segments). Wires its routes, dependencies and Temporal activities into the kit.
 */
import { createMailer, createSmsProvider, SmsProviderError, ensureEventRetentionSchedule, ObjectStorage, storageConfigFrom, TemplatePool, type ServiceModule } from '@rp/platform';
import { EVENT_RETENTION_SCHEDULE, recordedEmailActivities, TASK_QUEUES, WEBHOOK_ACTIVITY_TASK_QUEUE } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { AdminConfig } from './config.js';
import type { AdminDeps } from './deps.js';
import { businessUnitRoutes } from './routes/business-units.js';
import { userRoutes } from './routes/users.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { mailboxSettingsRoutes } from './routes/mailbox-settings.js';
import { cnamRoutes } from './routes/cnam.js';
import { createCnamRegistrationActivities } from './activities/cnam-registration.js';
import { operatorRegistryAdapter } from './adapters/cnam-registry.js';
import { segmentRoutes } from './routes/collections/segments.js';
import { tagRoutes } from './routes/collections/tags.js';
import { createWelcomeEmailActivities, welcomeEmailHandler } from './activities/welcome-email.js';
import { oooRoutes } from './routes/ooo.js';
import { userInviteRoutes } from './routes/user-invites.js';
import { createUserInviteActivities, userInviteHandler } from './activities/user-invite.js';
import { inviteTokenKey } from './domain/invites.js';
import { createUserReads } from './domain/user-reads.js';
import { emailTemplateRoutes } from './routes/collections/email-templates.js';
import { smsTemplateRoutes } from './routes/collections/sms-templates.js';
import { reportConfigRoutes, reportRunSchema } from './routes/report-configs.js';
import { organizationRoutes } from './routes/organization.js';
import { eventRoutes } from './routes/events.js';
import { webhookEndpointRoutes } from './routes/webhooks/endpoints.js';
import { webhookDeliveryRoutes } from './routes/webhooks/deliveries.js';
import { webhookEndpointSchema } from './routes/webhooks/schemas.js';
import { createScheduledReportActivities } from './activities/scheduled-report.js';
import { createOrganizationScheduleActivities } from './activities/organization-schedules.js';
import { pruneWebhookDeliveries } from './store/webhooks/retention.js';
import { createWebhookDispatchActivities } from './activities/webhooks-dispatch.js';
import { createWebhookDeliverActivities } from './activities/webhooks-deliver.js';
import { webhookDisabledEmailHandler } from './activities/webhook-disabled-email.js';
import { ensureWebhookDispatcher } from './domain/webhooks/dispatcher.js';
// collections engine: policies and tasks
import { policyRoutes } from './routes/collections/policies.js';
import { taskRoutes } from './routes/collections/tasks.js';
// Collections engine: promises to pay and disputes
import { promiseRoutes, promiseSchema } from './routes/collections/promises.js';
import { disputeRoutes, disputeSchema } from './routes/collections/disputes.js';
import { createPromiseToPayActivities } from './activities/collections/promise-to-pay.js';
// collections engine: the customer timeline
import { partnerActivityRoutes } from './routes/collections/activity.js';
// collections engine: runs and actions
import { collectionActionSchema, collectionRunRoutes } from './routes/collections/runs.js';
import { createCollectionRunActivities } from './activities/collections/run.js';
// AR inbox: messages (list, read, correct) and the inbox workflow's activities
import { inboxMessageSchema, inboxRoutes } from './routes/inbox/messages.js';
import { createInboxMessageActivities } from './activities/inbox/message.js';
// AR inbox: mail in (the provider endpoint and the inbound secret)
import { inboundRoutes } from './routes/inbound.js';

/** SMTP_URL with nodemailer's connection pool switched on (unless the URL says otherwise). */
function pooledSmtpUrl(url: string): string {
  return /[?&]pool=/.test(url) ? url : `${url}${url.includes('?') ? '&' : '?'}pool=true&maxConnections=8`;
}

export const adminModule: ServiceModule<AdminConfig, AdminDeps> = {
  name: 'admin',
  schema: 'admin',
  taskQueue: TASK_QUEUES.admin,
  info: { title: 'Admin service', version: '2.0.0', description: 'The organization (users, business units, credentials, out-of-office cover, invites, mailbox, CNAM) and its collections outreach (email and SMS templates, tags, segments, collection policies, follow-up tasks, report configs).' },
  migrations,
  routes: [
    ...businessUnitRoutes,
    ...userRoutes,
    ...apiKeyRoutes,
    ...oooRoutes,
    ...userInviteRoutes,
    ...mailboxSettingsRoutes,
    ...cnamRoutes,
    ...emailTemplateRoutes,
    ...smsTemplateRoutes,
    ...segmentRoutes,
    ...tagRoutes,
    ...reportConfigRoutes,
    ...organizationRoutes,
    ...eventRoutes,
    ...webhookEndpointRoutes,
    ...webhookDeliveryRoutes,
    // collections engine: policies and tasks
    ...policyRoutes,
    ...taskRoutes,
    // Collections engine: promises to pay and disputes
    ...promiseRoutes,
    ...disputeRoutes,
    // collections engine: the customer timeline
    ...partnerActivityRoutes,
    // collections engine: runs and actions
    ...collectionRunRoutes,
    // AR inbox: messages
    ...inboxRoutes,
    // AR inbox: mail in (the provider endpoint and the inbound secret)
    ...inboundRoutes,
  ],
  // Scheduled reports' events: data.object is the run as GET /v2/report-configs/{id}/runs shows it (domain/report-run-events.ts)
  events: [
    { type: 'webhook.test', object: webhookEndpointSchema },
    { type: 'report.sent', object: reportRunSchema },
    { type: 'report.failed', object: reportRunSchema },
    // Collections engine: promises to pay and disputes (data.object as their GET answers them)
    { type: 'promise_to_pay.created', object: promiseSchema },
    { type: 'promise_to_pay.kept', object: promiseSchema },
    { type: 'promise_to_pay.broken', object: promiseSchema },
    { type: 'dispute.created', object: disputeSchema },
    { type: 'dispute.resolved', object: disputeSchema },
    // collections engine: runs and actions
    { type: 'collection_action.sent', object: collectionActionSchema },
    { type: 'collection_action.failed', object: collectionActionSchema },
    // AR inbox: messages (data.object as GET /v2/inbox/messages/{id} answers it, presigned URLs null)
    { type: 'inbox_message.received', object: inboxMessageSchema },
    { type: 'inbox_message.assigned', object: inboxMessageSchema },
  ],
  // Webhook deliveries go with their events at the event retention; the admin worker owns its daily Schedule.
  retained: [{ name: 'webhook_deliveries', prune: pruneWebhookDeliveries }],
  // The worker owns the daily event-retention Schedule and the one webhook dispatcher (both idempotent).
  onWorkerStart: async ({ temporal }) => {
    await ensureEventRetentionSchedule(temporal.client, EVENT_RETENTION_SCHEDULE);
    await ensureWebhookDispatcher(temporal.client);
  },
  deps: async ({ db, temporal, config, log }) => ({
    db,
    temporal: temporal.client,
    config,
    userReads: await createUserReads({ db, databaseUrl: config.DATABASE_URL, log, ttlMs: config.USER_READ_CACHE_TTL_MS }),
    inviteTokenKey: inviteTokenKey(config.IDENTITY_SECRET),
    storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null,
    templates: new TemplatePool({ threads: config.TEMPLATE_RENDER_THREADS, maxQueue: config.TEMPLATE_RENDER_QUEUE }),
  }),
  closeDeps: async (deps) => {
    await deps.userReads?.close();
  },
  activities: ({ db, log, config, temporal }) => {
    const welcome = { db, log, mailer: createMailer(config.SMTP_URL), from: config.MAIL_FROM, publicBaseUrl: config.PUBLIC_BASE_URL };
    const invite = { ...welcome, mailer: createMailer(config.SMTP_URL), tokenKey: inviteTokenKey(config.IDENTITY_SECRET) };
    return {
      // The recorded emails of the admin task queue (the family's names; cash-app's worker serves `receipt` on its own queue)
      ...recordedEmailActivities({
        welcome: welcomeEmailHandler(welcome),
        invite: userInviteHandler(invite),
        'webhook-disabled': webhookDisabledEmailHandler({ ...welcome, mailer: createMailer(config.SMTP_URL) }),
      }),
      // The names of welcome and invite workflows started before the family, while recorded or running ones may call them
      ...createWelcomeEmailActivities(welcome),
      ...createUserInviteActivities(invite),
      ...createCnamRegistrationActivities({ db, log, registry: operatorRegistryAdapter }),
      ...createOrganizationScheduleActivities({ db, log, temporal: temporal.client }),
      ...createScheduledReportActivities({
        db,
        log,
        temporal: temporal.client,
        mailer: createMailer(config.SMTP_URL),
        from: config.MAIL_FROM,
        storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null,
        linkTtlSeconds: config.REPORT_LINK_TTL_SECONDS,
      }),
      // Collections engine: the promise-to-pay workflow's checks
      ...createPromiseToPayActivities({ db, log, config }),
      // collections engine: runs and actions (a pooled SMTP transport: a run sends many emails at once)
      ...createCollectionRunActivities({
        db,
        log,
        mailer: createMailer(pooledSmtpUrl(config.SMTP_URL)),
        // the run's renders are bounded by its concurrency, so they may all wait for a thread
        templates: new TemplatePool({ threads: config.TEMPLATE_RENDER_THREADS, maxQueue: 1_000 }),
        from: config.MAIL_FROM,
        inboundDomain: config.MAIL_INBOUND_DOMAIN,
        sms: config.SMS_AUTH_TOKEN
          ? createSmsProvider({ url: config.SMS_PROVIDER_URL, accountSid: config.SMS_ACCOUNT_SID, authToken: config.SMS_AUTH_TOKEN })
          : { send: () => Promise.reject(new SmsProviderError('No SMS provider is configured (SMS_AUTH_TOKEN is not set).', false, null)) },
        smsFrom: config.SMS_FROM,
        planPageSize: config.COLLECTIONS_PLAN_PAGE_SIZE,
        actBatchSize: config.COLLECTIONS_ACT_BATCH_SIZE,
        actConcurrency: config.COLLECTIONS_ACT_CONCURRENCY,
      }),
      // AR inbox: the inbox workflow's activities (parse, read, match, assign, act; finish)
      ...createInboxMessageActivities({ db, log, temporal: temporal.client, storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null }),
    };
  },
  // Webhook dispatch and delivery run for minutes: on a queue of their own, beside admin's.
  activityQueues: ({ db, log, config, temporal }) => [
    {
      taskQueue: WEBHOOK_ACTIVITY_TASK_QUEUE,
      activities: {
        ...createWebhookDispatchActivities({ db, log, temporal: temporal.client, databaseUrl: config.DATABASE_URL }),
        ...createWebhookDeliverActivities({
          db,
          log,
          policy: config.OUTBOUND_ALLOWLIST,
          secrets: config,
          retryDelaysSeconds: config.WEBHOOK_RETRY_DELAYS_SECONDS,
          timeoutMs: config.WEBHOOK_TIMEOUT_MS,
          disableAfterHours: config.WEBHOOK_DISABLE_AFTER_HOURS,
          concurrency: config.WEBHOOK_CONCURRENCY,
        }),
      },
    },
  ],
  // Webhook delivery needs its dispatcher running: every admin worker ensures it when it starts.
};
