/**
 * The AR inbox's shared vocabulary: what the parse stage makes of a received message (the input of
 * the readers: category, bounce, auto-reply, promise and dispute) and what the readers answer.
 * Pure types and constants; no I/O.
 */

export const INBOX_CATEGORIES = ['remittance', 'promise_to_pay', 'dispute', 'question', 'auto_reply', 'bounce', 'other'] as const;
export type InboxCategory = (typeof INBOX_CATEGORIES)[number];

export const INBOX_STATUSES = ['unassigned', 'assigned', 'archived'] as const;
export type InboxStatus = (typeof INBOX_STATUSES)[number];

/** Most attachments and bytes one message may have (SMTP refuses beyond at DATA with 552; HTTP with 413). */
export const MAX_INBOUND_ATTACHMENTS = 20;
export const MAX_INBOUND_MESSAGE_BYTES = 25 * 1024 * 1024;

export interface MailAddress {
  address: string;
  name: string | null;
}

/** One attachment as the parse stage stored it (its bytes in object storage) and, when readable, its text. */
export interface ParsedAttachment {
  position: number;
  name: string;
  mime_type: string;
  size: number;
  object_key: string;
  content_id: string | null;
  disposition: string | null;
  /** kernel attachmentText's text (PDF, CSV, XLSX, HTML, plain text), null when not readable */
  text: string | null;
  /** CSV/XLSX rows, null otherwise */
  rows: string[][] | null;
}

/** A received message after MIME parsing (postal-mime), before any reading of its meaning. */
export interface ParsedInboundMessage {
  /** the Message-ID header with angle brackets, or `<sha256@inbound.invalid>` when it has none */
  messageId: string;
  inReplyTo: string | null;
  /** the References header's ids, oldest first, with angle brackets */
  references: string[];
  from: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  subject: string | null;
  /** the Date header as an ISO instant, null when absent or unreadable */
  date: string | null;
  /** every header, lower-case names; repeated headers joined with '\n' */
  headers: Record<string, string>;
  /** the plain-text body, or the HTML body as text when there is no plain one */
  text: string;
  html: string | null;
  attachments: ParsedAttachment[];
  /** RFC 3464 delivery-status fields (message/delivery-status part) when the message is a DSN */
  deliveryStatus: DeliveryStatus | null;
  /** things the parser met but does not read (e.g. 'tnef'), each with a human detail */
  unsupported: { kind: string; detail: string }[];
}

export interface DeliveryStatus {
  reportingMta: string | null;
  recipients: {
    /** Final-Recipient (or Original-Recipient) address, lower case */
    address: string;
    /** failed | delayed | delivered | relayed | expanded */
    action: string;
    /** e.g. 5.1.1 */
    status: string | null;
    diagnostic: string | null;
  }[];
}

/** A promise to pay read from a message (amount null: the invoices' open amount). */
export interface PromiseReading {
  invoice_numbers: string[];
  amount: string | null;
  currency: string | null;
  /** YYYY-MM-DD */
  promised_date: string | null;
  /** 0..100 */
  confidence: number;
  /** the sentence it was read from */
  excerpt: string;
}

export const DISPUTE_REASON_CODES = ['pricing', 'quantity', 'quality', 'damaged', 'not_received', 'duplicate_billing', 'tax', 'other'] as const;
export type DisputeReasonCode = (typeof DISPUTE_REASON_CODES)[number];

export interface DisputeReading {
  invoice_numbers: string[];
  reason_code: DisputeReasonCode;
  amount: string | null;
  /** 0..100 */
  confidence: number;
  excerpt: string;
}

/** What the deterministic readers make of a message. */
export interface MessageReading {
  category: InboxCategory;
  /** 0..100 */
  category_confidence: number;
  /** why, in words a collector reads (e.g. "Auto-Submitted: auto-replied header") */
  category_reasons: string[];
  /** set for bounces: the addresses that failed */
  bounce: DeliveryStatus | null;
  promise: PromiseReading | null;
  dispute: DisputeReading | null;
  /** invoice- or customer-number-like tokens found in subject, body and attachment texts (to look up in the ledger) */
  referenced_numbers: string[];
  /** a company name read from the signature block, if any */
  signature_company: string | null;
}

/** A reference to a record a message led to or answers. */
export interface InboxRef {
  object: string;
  id: string;
}

/** What a message suggests when it was not read with enough confidence to act on. */
export type InboxSuggestion =
  | ({ type: 'promise_to_pay'; reason: string } & Omit<PromiseReading, 'excerpt'> & { excerpt: string })
  | ({ type: 'dispute'; reason: string } & Omit<DisputeReading, 'excerpt'> & { excerpt: string });
