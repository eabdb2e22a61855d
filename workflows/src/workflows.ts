// Entry point of the workflow bundle: every workflow function of the platform, one export each.
// Only @temporalio/workflow and `import type` of activity contracts may be imported from here down.
export { welcomeEmail } from './admin/welcome-email.js';
export { connectionSync } from './integrations/connection-sync.js';
export { paymentReceipt } from './cash-app/payment-receipt.js';
export { remittanceRequest } from './cash-app/remittance-request.js';
export { bankStatement } from './cash-app/bank-statement.js';
export { paymentPosting } from './integrations/payment-posting.js';
export { cnamRegistration } from './admin/cnam-registration.js';
export { userInvite } from './admin/user-invite.js';
export { playbookExtraction } from './knowledge/playbook-extraction.js';
export { scheduledReport } from './admin/scheduled-report.js';
export { eventRetention } from './admin/event-retention.js';
export { organizationSchedules } from './admin/organization-schedules.js';
export { webhookDispatcher } from './admin/webhook-dispatcher.js';
export { webhookEndpointDelivery } from './admin/webhook-endpoint-delivery.js';
export { promiseToPay } from './admin/promise-to-pay.js';
export { collectionRun, scheduledCollectionRun } from './admin/collection-run.js';
export { inboxMessage } from './admin/inbox-message.js';
