/**
 * The inbox benchmark's message descriptions (what a message is, before it is rendered to MIME
 * bytes) and their labels (the truth the run is scored against).
 */
import type { Rng } from '../matching/random.js';
import type { InboxCustomer, InboxInvoice, InboxLedger } from './ledger.js';

export interface Addr {
  name?: string;
  address: string;
}

/** A PDF page flow: each row is cells placed at x (points from the left margin); rows flow down, pages break when full. */
export interface PdfSpec {
  font: 'Helvetica' | 'Courier' | 'TimesRoman';
  size: number;
  rows: PdfCell[][];
}

/** A text at x points from the left margin (its right edge at x when `right`). */
export interface PdfCell {
  x: number;
  text: string;
  bold?: boolean;
  right?: boolean;
}

export interface XlsxSpec {
  sheet: string;
  rows: (string | number | null)[][];
  /** the number format of numeric cells, e.g. '#,##0.00' */
  numFmt: string;
}

export interface AttachmentSpec {
  filename: string;
  contentType: string;
  pdf?: PdfSpec;
  xlsx?: XlsxSpec;
  /** CSV or text content */
  text?: string;
  /** a whole message attached (message/rfc822) */
  eml?: MessageSpec;
}

export interface MessageSpec {
  messageId: string;
  /** ISO instant of the Date header */
  date: string;
  from: Addr;
  to: Addr[];
  cc?: Addr[];
  subject: string;
  text?: string;
  html?: string;
  headers?: Record<string, string>;
  inReplyTo?: string;
  references?: string[];
  attachments?: AttachmentSpec[];
  /** a complete hand-written RFC 5322 message (DSNs); rendered as is */
  raw?: string;
}

export type Category = 'remittance' | 'promise_to_pay' | 'dispute' | 'question' | 'auto_reply' | 'bounce' | 'other';

export interface RemittanceLineLabel {
  invoice_number: string;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
}

export interface RemittanceLabel {
  currency: string;
  payment_date: string;
  /** the sum of the lines' amount_paid: what reaches the bank */
  total: string;
  lines: RemittanceLineLabel[];
}

export interface MessageLabel {
  /** m0001… ; the .eml file is `<id>.eml` */
  id: string;
  message_id: string;
  /** the payer house style or conversation kind (scores are reported per style) */
  style: string;
  language: string;
  category: Category;
  /** the true customer's code (account_number), or null when the message is no customer's */
  customer: string | null;
  /**
   * the customer whose reminder this message answers: its In-Reply-To/References carry
   * `<reminder.<code>@outbound.placeholder.invalid>`, which the run replaces by the Message-ID of the
   * reminder really sent to that customer
   */
  reply_to_reminder: string | null;
  remittance: RemittanceLabel | null;
  promise: { invoice_numbers: string[]; amount: string | null; date: string } | null;
  dispute: { invoice_numbers: string[]; reason_code: string } | null;
  bounce: { address: string } | null;
}

export interface CorpusMessage {
  spec: MessageSpec;
  label: MessageLabel;
}

/** One line an advice pays (cents). */
export interface PaidLine {
  invoice: InboxInvoice;
  paid: number;
  discount: number;
  withheld: number;
}

/** What a remittance house style writes about. */
export interface AdviceContext {
  r: Rng;
  ledger: InboxLedger;
  customer: InboxCustomer;
  lines: PaidLine[];
  currency: string;
  /** cents */
  total: number;
  paymentDate: string;
  /** the AP clerk's address (customer's mail domain) */
  sender: Addr;
  us: Addr;
  /** the reminder this message answers, when it is a reply */
  replyTo: string | null;
}

/** What a house style makes of an advice: the message's visible parts. */
export type AdviceParts = Pick<MessageSpec, 'from' | 'subject' | 'text' | 'html' | 'attachments' | 'headers' | 'cc'>;

export interface HouseStyle {
  name: string;
  language: 'en' | 'de' | 'fr' | 'nl';
  /** which deductions its lines carry */
  deductions: 'none' | 'discount' | 'withholding' | 'mixed';
  maxLines: number;
  /** a reply to one of our reminders */
  reply?: boolean;
  /** customers it fits (e.g. the free-mail style only free-mail customers); default any */
  fits?: (c: InboxCustomer) => boolean;
  build(ctx: AdviceContext): AdviceParts;
}

export const OUR_ORGANIZATION = { name: 'Nordlicht Vertrieb GmbH', domain: 'nordlicht-vertrieb.example', ar: 'ar@nordlicht-vertrieb.example' };

/** The placeholder Message-ID of our reminder to a customer (replaced by the real one at delivery). */
export const reminderPlaceholder = (code: string) => `<reminder.${code}@outbound.placeholder.invalid>`;
