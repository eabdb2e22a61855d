/**
 * Rules of posting applied cash to the ERP (pure):
 *
 * - The ERP is the one the payment's invoices came from (their ledger origin: `middleware` or
 *   `connection:<id>`); a payment without allocations goes to its customer's origin. Invoices from
 *   different ERPs in one payment cannot be posted (refused with a posting error).
 * - QuickBooks Online (a `connection:<id>` origin of a quickbooks_online connection) is posted
 *   directly through its API; `middleware` is posted through the queue the middleware pulls;
 *   every other provider has no posting (posting error).
 * - An unallocated remainder is posted on account where the provider's
 *   `cash_app_features.can_post_on_account_payment` allows it, else the posting is refused.
 * - Only `amount_paid` is cash: it is what the ERP payment applies to each invoice. Discounts,
 *   withholdings and adjustments travel in the payload for the middleware; QuickBooks has no place
 *   for them on a Payment.
 */
import { createHash } from 'node:crypto';
import { currencyMinorUnits, Money } from '@rp/platform';
import type { PaymentForPosting, PostingOutcome } from '@rp/workflows';
import { CASH_APP_FEATURES } from './providers.js';
import type { PostingPayload, PostingRow } from '../store/payment-postings.js';

export const MIDDLEWARE_ORIGIN = 'middleware';
const CONNECTION_ORIGIN = /^connection:(.+)$/;

/** Providers this platform posts to through their API (the others with features use the queue). */
export const DIRECT_POSTING_PROVIDERS: ReadonlySet<string> = new Set(['quickbooks_online']);

/**
 * The payment's posting key: the reference every posting attempt of the payment writes into the ERP
 * (QuickBooks: the Payment's PaymentRefNum; the middleware: `posting_key` of the queue entry), so
 * that before posting again the ERP is searched for an earlier attempt it stored without our knowing
 * (a lost answer) and that Payment is adopted instead of a second one being created. QuickBooks
 * keeps at most 21 characters in PaymentRefNum and may compare them without regard to case, so the
 * key is `RP` and 19 base-32 digits (0-9, A-V) of SHA-256 over organization and payment id: 95 bits,
 * fixed for the life of the payment (an unposted Payment is deleted in QuickBooks, and a deleted
 * Payment is not found by the search).
 */
export function postingKey(organizationId: string, paymentId: string): string {
  const digest = createHash('sha256').update(`${organizationId}:${paymentId}`).digest('hex');
  const bits95 = BigInt(`0x${digest.slice(0, 24)}`) >> 1n;
  return `RP${bits95.toString(32).toUpperCase().padStart(19, '0')}`;
}

export type PostingTarget = { origin: string; connectionId: string | null } | { error: string };

/** Which ledger origin (ERP) the payment belongs to. */
export function postingOrigin(payment: PaymentForPosting): PostingTarget {
  const origins = [...new Set(payment.lines.map((l) => l.origin))];
  if (origins.length > 1) return { error: `The payment's invoices come from different systems (${origins.join(', ')}); post it per system by splitting the allocations.` };
  const origin = origins[0] ?? payment.partner?.origin;
  if (!origin) return { error: 'The payment has neither invoices nor a customer, so there is nothing to post it to.' };
  if (origin === MIDDLEWARE_ORIGIN) return { origin, connectionId: null };
  const m = CONNECTION_ORIGIN.exec(origin);
  if (!m) return { error: `The invoices' origin ${origin} has no ERP posting.` };
  return { origin, connectionId: m[1]! };
}

/** Why this provider cannot take the payment, or null. */
export function postingRefusal(providerName: string, origin: string, payment: PaymentForPosting): string | null {
  const features = CASH_APP_FEATURES[providerName];
  if (!features) return `Provider ${providerName} has no posting of payments on this platform.`;
  if (new Money(payment.unallocatedAmount).gt(0) && !features.can_post_on_account_payment) {
    return `Provider ${providerName} cannot post the unallocated ${new Money(payment.unallocatedAmount).toFixed(2)} on account; allocate the whole amount.`;
  }
  if (new Money(payment.unallocatedAmount).gt(0) && !payment.partner) {
    return `The unallocated ${new Money(payment.unallocatedAmount).toFixed(2)} cannot be posted on account: the payment has no customer; set its partner.`;
  }
  if (DIRECT_POSTING_PROVIDERS.has(providerName)) {
    if (!payment.partner || payment.partner.origin !== origin) return 'The payment has no customer of this ERP; set its partner before posting.';
    const missing = payment.lines.filter((l) => !l.remoteId).map((l) => l.documentNumber);
    if (missing.length) return `Invoices ${missing.join(', ')} have no ERP id to link the payment to.`;
  }
  return null;
}

export function postingPayload(payment: PaymentForPosting): PostingPayload {
  const minor = currencyMinorUnits(payment.currency);
  const fmt = (v: string) => new Money(v).toFixed(minor);
  return {
    payment_id: payment.paymentId,
    amount: fmt(payment.amount),
    currency: payment.currency,
    payment_date: payment.paymentDate,
    bank_reference: payment.bankReference,
    customer: payment.partner ? { partner_id: payment.partner.id, remote_id: payment.partner.remoteId, name: payment.partner.name } : null,
    unallocated_amount: fmt(payment.unallocatedAmount),
    lines: payment.lines.map((l) => ({
      invoice_id: l.invoiceId,
      kind: l.kind ?? 'invoice',
      remote_id: l.remoteId,
      document_number: l.documentNumber,
      company_code: l.companyCode,
      fiscal_year: l.fiscalYear,
      amount_paid: fmt(l.amountPaid),
      amount_discount: fmt(l.amountDiscount),
      amount_withheld: fmt(l.amountWithheld),
      adjustment_amount: fmt(l.adjustmentAmount),
    })),
  };
}

/** The outcome a finished posting row stands for; null while it waits (posting, ready_to_post). */
export function outcomeOf(row: PostingRow): PostingOutcome | null {
  if (row.status === 'posted' || row.status === 'unposting') {
    return {
      status: 'posted',
      postingId: row.id,
      provider: row.provider_name,
      canUnpost: CASH_APP_FEATURES[row.provider_name]?.can_unpost_payment ?? false,
      erpPaymentId: row.erp_payment_id,
      erpDocumentNumber: row.erp_document_number,
      postedAt: row.posted_at!.toISOString(),
      adopted: row.erp_adopted,
    };
  }
  if (row.status === 'failed') return { status: 'failed', postingId: row.id, provider: row.provider_name, error: row.error ?? 'failed' };
  if (row.status === 'unposted') return { status: 'unposted', postingId: row.id };
  return null;
}
