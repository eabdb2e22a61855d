/**
 * The event catalogue: every event type the platform records, the service whose schema records it,
 * and the kind of resource its `data.object` is. Names are `resource.action`. A new domain adds its
 * types here (and declares their payload schema in its service module, for the OpenAPI `webhooks`).
 */
export const EVENT_CATALOGUE = {
  'bank_statement.processed': { service: 'cash-app', resource: 'bank_statement', summary: 'A bank statement was read and matched; its lines are ready for review.' },
  'bank_statement.failed': { service: 'cash-app', resource: 'bank_statement', summary: 'A bank statement could not be processed.' },
  'bank_statement.approved': { service: 'cash-app', resource: 'bank_statement', summary: 'A processed bank statement was approved (its review is closed; it can no longer be deleted).' },
  'payment.proposed': { service: 'cash-app', resource: 'payment', summary: 'Cash application proposed a payment (customer and allocations) for a bank line.' },
  'payment.approved': { service: 'cash-app', resource: 'payment', summary: 'A payment was approved (by a user or by automatic approval).' },
  'payment.posted': { service: 'cash-app', resource: 'payment', summary: 'A payment was posted to the ERP.' },
  'payment.posting_failed': { service: 'cash-app', resource: 'payment', summary: 'Posting a payment to the ERP failed.' },
  'remittance.created': { service: 'cash-app', resource: 'remittance', summary: 'A remittance advice was recorded.' },
  'outreach.sent': { service: 'cash-app', resource: 'outreach', summary: 'An outreach email (e.g. a payment receipt) was accepted by the mail server.' },
  'outreach.failed': { service: 'cash-app', resource: 'outreach', summary: 'An outreach email could not be sent.' },
  'connection.sync_completed': { service: 'integrations', resource: 'connection', summary: 'A connection sync finished.' },
  'connection.sync_failed': { service: 'integrations', resource: 'connection', summary: 'A connection sync failed.' },
  'connection.health_changed': { service: 'integrations', resource: 'connection', summary: 'A connection\'s health changed (e.g. its credentials stopped working).' },
  'invoice.created': { service: 'integrations', resource: 'invoice', summary: 'An invoice arrived (push or sync).' },
  'invoice.updated': { service: 'integrations', resource: 'invoice', summary: 'An invoice changed (push or sync); `previous_attributes` holds the fields that changed.' },
  'invoice.closed': { service: 'integrations', resource: 'invoice', summary: 'An invoice was closed (fully paid or closed in the ERP).' },
  'partner.created': { service: 'integrations', resource: 'partner', summary: 'A partner (customer) arrived (push or sync).' },
  'partner.updated': { service: 'integrations', resource: 'partner', summary: 'A partner changed; `previous_attributes` holds the fields that changed.' },
  'extraction.completed': { service: 'knowledge', resource: 'extraction', summary: 'A playbook extraction job finished.' },
  'extraction.failed': { service: 'knowledge', resource: 'extraction', summary: 'A playbook extraction job failed.' },
  'proposal.created': { service: 'knowledge', resource: 'proposal', summary: 'A knowledge proposal was created for review.' },
  'report.sent': { service: 'admin', resource: 'report_run', summary: 'A scheduled report was sent.' },
  'report.failed': { service: 'admin', resource: 'report_run', summary: 'A scheduled report could not be sent.' },
  'collection_action.sent': { service: 'admin', resource: 'collection_action', summary: 'A collection action was done: its email or SMS accepted by the transport, or its task created.' },
  'collection_action.failed': { service: 'admin', resource: 'collection_action', summary: 'A collection action failed; the next run retries its invoices.' },
  'webhook.test': { service: 'admin', resource: 'webhook_endpoint', summary: 'A test event, sent to one endpoint on request.' },
  'promise_to_pay.created': { service: 'admin', resource: 'promise_to_pay', summary: 'A customer\'s promise to pay was recorded; chasing of its invoices holds while it is open.' },
  'promise_to_pay.kept': { service: 'admin', resource: 'promise_to_pay', summary: 'A promise to pay was kept: approved payments or ledger closings covered its amount in time.' },
  'promise_to_pay.broken': { service: 'admin', resource: 'promise_to_pay', summary: 'A promise to pay was broken: its grace period ended without its amount covered; chasing resumes.' },
  'dispute.created': { service: 'admin', resource: 'dispute', summary: 'A dispute was opened on an invoice; the invoice is not chased while it is open.' },
  'inbox_message.received': { service: 'admin', resource: 'inbox_message', summary: 'An email arrived in the AR inbox and was read: matched to a customer (or not) and categorized.' },
  'inbox_message.assigned': { service: 'admin', resource: 'inbox_message', summary: 'An inbox message was assigned to a customer and collector, automatically (confidence at or above the threshold) or by a user.' },
  'dispute.resolved': { service: 'admin', resource: 'dispute', summary: 'A dispute was closed, resolved or rejected (its `status` says which).' },
} as const;

export type EventType = keyof typeof EVENT_CATALOGUE;

/** Every event type, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as EventType[];

export function isEventType(value: string): value is EventType {
  return Object.prototype.hasOwnProperty.call(EVENT_CATALOGUE, value);
}

/** The Postgres schemas whose `events` table holds events (one transactional outbox per service schema). */
export const EVENT_SOURCES = ['admin', 'integrations', 'cash_app', 'knowledge'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];
