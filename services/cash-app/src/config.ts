import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';

export const cashAppConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8102),
  /** Payment-receipt emails: SMTP server and sender. */
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').default('smtp://127.0.0.1:1025'),
  MAIL_FROM: z.string().min(3).default('Receivables Platform <no-reply@receivables.local>'),
  /** Payment-receipt emails: SMTP attempts before the receipt is marked failed, and the first retry delay (doubling after). */
  PAYMENT_RECEIPT_MAX_ATTEMPTS: env.int(8, 1),
  PAYMENT_RECEIPT_RETRY_SECONDS: env.int(5, 1),
  /** Payment-receipt emails: the email-template folder (admin, by exact name) whose default template renders the receipt; none → the built-in receipt. */
  PAYMENT_RECEIPT_TEMPLATE_FOLDER: z.string().min(1).max(256).default('Payment receipts'),
  /**
   * Remittance requests: the email-template folder (admin, by exact name) whose default template renders the request;
   * none → the built-in request.
   */
  REMITTANCE_REQUEST_TEMPLATE_FOLDER: z.string().min(1).max(256).default('Remittance requests'),
  /**
   * The platform's inbound mail domain, as admin's: an organization without a custom `inbound_parse_hostname`
   * receives mail at `<organization id>.<MAIL_INBOUND_DOMAIN>`, which remittance requests name in their Reply-To.
   */
  MAIL_INBOUND_DOMAIN: z
    .string()
    .max(253)
    .regex(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/, 'must be a host name such as inbound.example.com')
    .default('inbound.receivables.local'),
  /** Matching: a shortfall up to this amount (or MATCH_TOLERANCE_PERCENT of the invoices' open total, whichever is larger) is proposed as an adjustment. */
  MATCH_TOLERANCE_AMOUNT: z.string().regex(/^\d{1,12}(\.\d{1,4})?$/, 'must be a non-negative decimal amount').default('5.00'),
  MATCH_TOLERANCE_PERCENT: z.string().regex(/^\d{1,3}(\.\d{1,4})?$/, 'must be a non-negative percentage').default('0'),
  /**
   * Matching: an unexplained shortfall above the tolerance up to this amount (in the deposit's currency; 0: none) is read
   * as a bank charge: proposed relieving the invoice in full with the charge on the adjustment, scored below 0.9 (for a person).
   */
  MATCH_FEE_CEILING_AMOUNT: z.string().regex(/^\d{1,12}(\.\d{1,4})?$/, 'must be a non-negative decimal amount').default('35.00'),
  /** Matching: the system adjustment a shortfall within tolerance (or a bank charge up to the fee ceiling) is booked to. */
  MATCH_TOLERANCE_ADJUSTMENT: z.enum(['short_pay_write_off', 'bank_fee']).default('short_pay_write_off'),
  /** Bank statements: transactions per INSERT/heartbeat, and an optional pause after each chunk (ms; a throttle, 0 in production). */
  BANK_STATEMENT_CHUNK_SIZE: env.int(5000, 1),
  BANK_STATEMENT_CHUNK_PAUSE_MS: env.int(0, 0),
  /**
   * Statement uploads are parsed on worker threads (domain/statement-parse-pool.ts): threads (0: one less than the
   * cores, at least one, at most two) and uploads that may wait for one; beyond them an upload is 503 with Retry-After.
   */
  STATEMENT_PARSE_THREADS: env.int(0, 0),
  STATEMENT_PARSE_QUEUE: env.int(4, 0),
});
export type CashAppConfig = z.infer<typeof cashAppConfigSchema>;

export function loadCashAppConfig(source: Record<string, string | undefined> = process.env): CashAppConfig {
  return loadConfig(cashAppConfigSchema, source);
}
