/**
 * Business ids and activity contracts of the AR inbox (DESIGN §4). Admin owns the inbox: a message
 * accepted on SMTP or the provider endpoint is stored (raw in object storage, a row in
 * inbox_messages) and then read by one workflow per message on admin's task queue. Remittance
 * advice is cash-app's: the workflow hands the message to cash-app's activity on cash-app's own
 * task queue, which reads the advice, records remittances and re-matches waiting bank lines.
 */
import { TASK_QUEUES } from '../task-queues.js';

/** Inbox workflows run on admin's task queue. */
export const INBOX_TASK_QUEUE = TASK_QUEUES.admin;

/** Workflow type started for every accepted message. */
export const INBOX_MESSAGE_WORKFLOW = 'inboxMessage';

/** One workflow per accepted message: `inbox-message-<inbox message id>` (a second start of the same message is refused as already started). */
export function inboxMessageWorkflowId(inboxMessageId: string): string {
  return `inbox-message-${inboxMessageId}`;
}

export interface InboxMessageInput {
  organizationId: string;
  inboxMessageId: string;
}

/** The message as the remittance reader needs it (no raw bytes: attachments are read from object storage). */
export interface InboundRemittanceInput {
  organizationId: string;
  inboxMessageId: string;
  /** the inbox message summary a remittance's `email` field shows */
  email: {
    id: string;
    message_id: string;
    from: string | null;
    from_name: string | null;
    subject: string | null;
    received_at: string;
  };
  /** the message's text body (HTML bodies already as text), at most 512 KiB */
  text: string;
  /** the message's HTML body when it has one (tables are read from it), at most 1 MiB; null otherwise */
  html: string | null;
  /** the attachments, in message order, stored as objects in the platform bucket */
  attachments: { position: number; name: string; mime_type: string; size: number; object_key: string }[];
  /** the customer the inbox matched the message to, if any (a hint: invoice numbers decide) */
  partnerId: string | null;
  /** set when the message replies to a remittance request: the deposit the advice is for */
  bankTransactionId: string | null;
}

export interface InboundRemittanceResult {
  /** remittances recorded (or found recorded by an earlier attempt), one per advice read */
  remittanceIds: string[];
  /** bank lines given a new payment proposal because an advice arrived */
  rematchedTransactionIds: string[];
  /** why nothing was recorded, when nothing was */
  errorCode: string | null;
}

/** Activity contract on cash-app's task queue, implemented by services/cash-app (createInboundRemittanceActivities). */
export interface InboundRemittanceActivities {
  /** Reads the remittance advice in the message, records one remittance per advice (idempotent per message part) and re-matches open bank lines it explains. */
  recordInboundRemittances(input: InboundRemittanceInput): Promise<InboundRemittanceResult>;
}
