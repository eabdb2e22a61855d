/**
 * The cash-app service: bank statements and their transactions, payments (matching, approval, ERP
 * posting), remittances, adjustments, exchange rates, receipts and analytics, with the activities
 * its workflows run on the cash-app task queue.
 */
import { createMailer, defaultTemplateThreads, ObjectStorage, storageConfigFrom, TemplatePool, type ServiceModule } from '@rp/platform';
import { recordedEmailActivities, TASK_QUEUES } from '@rp/workflows';
import { migrations } from '../migrations/index.js';
import type { CashAppConfig } from './config.js';
import type { CashAppDeps } from './deps.js';
import { adjustmentRoutes } from './routes/adjustments.js';
import { predictedOverdueRoutes } from './routes/predicted-overdue.js';
import { remittanceRoutes, remittanceSchema } from './routes/remittances.js';
import { outreachRoutes, outreachSchema } from './routes/outreach.js';
import { createPaymentReceiptActivities, paymentReceiptHandler } from './activities/payment-receipt.js';
import { createRemittanceRequestActivities, remittanceRequestHandler } from './activities/remittance-request.js';
import { createMatchingActivities } from './activities/matching.js';
import { createAutoApprovalActivities } from './activities/auto-approval.js';
import { createBankStatementActivities } from './activities/bank-statement.js';
import { statementParsePool } from './domain/statement-parse-pool.js';
import { bankStatementRoutes } from './routes/bank-statements.js';
import { bankStatementSchema } from './routes/bank-statement-schemas.js';
import { paymentRoutes, paymentSchema } from './routes/payments.js';
import { paymentPostingRoutes } from './routes/payment-posting.js';
import { createPaymentPostingActivities } from './activities/payment-posting.js';
import { metricsRoutes } from './routes/metrics.js';
import { exchangeRateRoutes } from './routes/exchange-rates.js';
import { createReportActivities } from './activities/reports.js';
import { createCustomerHabitsActivities } from './activities/customer-habits.js';
import { createPromiseCoverageActivities } from './activities/promise-coverage.js';
import { createInboundRemittanceActivities } from './activities/inbound-remittance.js';

export const cashAppModule: ServiceModule<CashAppConfig, CashAppDeps> = {
  name: 'cash-app',
  schema: 'cash_app',
  taskQueue: TASK_QUEUES.cashApp,
  info: { title: 'Cash application service', version: '2.0.0', description: 'Cash application: bank statements, payments and their ERP postings, remittances, adjustments, exchange rates, receipts and AR analytics.' },
  migrations,
  // A DELETE of a statement cancels its workflow and waits for it to close: the cancellation reaches
  // the running activity with the answer to its next heartbeat, so heartbeats are sent at least every
  // 500 ms (the SDK's default throttle is 0.8 × the heartbeat timeout, 8 s for the statement's store
  // step) and the activities heartbeat at least that often (activities/pacer.ts).
  worker: { maxHeartbeatThrottleInterval: '500 ms', defaultHeartbeatThrottleInterval: '500 ms' },
  // The events cash-app records (domain/events.ts), each `data.object` the resource's response schema;
  // a statement's is its answer without inline transactions (GET with `transactions=omit`).
  events: [
    { type: 'bank_statement.processed', object: bankStatementSchema },
    { type: 'bank_statement.failed', object: bankStatementSchema },
    { type: 'bank_statement.approved', object: bankStatementSchema },
    { type: 'payment.proposed', object: paymentSchema },
    { type: 'payment.approved', object: paymentSchema },
    { type: 'payment.posted', object: paymentSchema },
    { type: 'payment.posting_failed', object: paymentSchema },
    { type: 'remittance.created', object: remittanceSchema },
    { type: 'outreach.sent', object: outreachSchema },
    { type: 'outreach.failed', object: outreachSchema },
  ],
  routes: [...bankStatementRoutes, ...adjustmentRoutes, ...predictedOverdueRoutes, ...remittanceRoutes, ...outreachRoutes, ...paymentRoutes, ...paymentPostingRoutes, ...metricsRoutes, ...exchangeRateRoutes],
  deps: ({ db, temporal, config }) => {
    // the statement-parse threads start with the API (domain/statement-parse-pool.ts)
    statementParsePool(config);
    return { db, temporal: temporal.client, config, storage: config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null };
  },
  activities: ({ db, log, config, temporal }) => {
    const storage = config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null;
    // Receipt templates render on worker threads, as admin's previews do; the queue is bounded by the
    // worker's activity slots, and a full one fails the attempt as retryable (TemplateRenderBusy).
    const receiptTemplates = new TemplatePool({ threads: defaultTemplateThreads(), maxQueue: 1_000 });
    const receipt = { db, log, mailer: createMailer(config.SMTP_URL), from: config.MAIL_FROM, templateFolder: config.PAYMENT_RECEIPT_TEMPLATE_FOLDER, templates: receiptTemplates };
    // Remittance requests: the same mailer and render threads, their own template folder, Reply-To the AR inbox
    const remittanceRequest = { ...receipt, templateFolder: config.REMITTANCE_REQUEST_TEMPLATE_FOLDER, inboundDomain: config.MAIL_INBOUND_DOMAIN };
    return {
      // The recorded emails of the cash-app task queue (the family's names; admin's worker serves `welcome` and `invite` on its own queue)
      ...recordedEmailActivities({ receipt: paymentReceiptHandler(receipt), 'remittance-request': remittanceRequestHandler(remittanceRequest) }),
      ...createRemittanceRequestActivities(remittanceRequest),
      // The receipt's failure record, and the names of receipt workflows started before the family while recorded or running ones may call them
      ...createPaymentReceiptActivities(receipt),
      ...createMatchingActivities({ db, log, config }),
      // Approvals start ERP postings, as a user's approval does: they need the Temporal client.
      ...createAutoApprovalActivities({ db, log, temporal: temporal.client }),
      ...createPaymentPostingActivities({ db, log }),
      ...createBankStatementActivities({ db, log, storage, chunkSize: config.BANK_STATEMENT_CHUNK_SIZE, chunkPauseMs: config.BANK_STATEMENT_CHUNK_PAUSE_MS }),
      // The AR aging report's data and files (the scheduled-report workflow calls it on this queue)
      ...createReportActivities({ db, log, storage }),
      // The onboarding extraction's per-customer cash-app figures (the knowledge workflow calls it on this queue)
      ...createCustomerHabitsActivities({ db, log, storage }),
      // What approved payments applied to a promise to pay's invoices (admin's promise-to-pay workflow calls it on this queue)
      ...createPromiseCoverageActivities({ db, log }),
      // Remittance advice read from the AR inbox (admin's inbox workflow calls it on this queue)
      ...createInboundRemittanceActivities({ db, log, storage, config }),
    };
  },
};
