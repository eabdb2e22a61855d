/**
 * The open-amount rule (pure). The ledger's `amount_open` is the ERP's figure; cash application
 * subtracts its own allocations from it until the ERP's figure includes them, and no longer:
 *
 *   an allocation of a payment reduces its invoice's open amount
 *   - while the payment is not posted to the ERP (`posted_at` null: unapproved proposals where the
 *     caller counts them, approved payments waiting for, or refused by, the ERP), and
 *   - once posted, until the ERP reports the document again after `posted_at` (`erp_reported_at`:
 *     the arrival of a push, or the moment a sync read the page, strictly later than `posted_at`).
 *
 * `posted_at` is when the ERP was known to have the payment (QuickBooks answered the create; the
 * middleware reported it posted), so a report after it reflects the payment: invoice 1000, 400
 * approved → 600 open; posted, then the ERP reports 600 → 600 open (not 200). A report read before
 * the posting keeps the allocation subtracted. Unposting makes the payment unapproved again, so its
 * allocations stop counting at once (the ledger may show the lower figure until the ERP reports the
 * document again: open amounts are understated for that while, never overstated).
 */
import { Money, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { ReliefRow } from '../domain-types/payments.js';
import { reliefRows, type PaymentStatus } from '../store/payments.js';

export type { ReliefRow };

/** Whether the ERP's figure for the document already includes a payment posted at `postedAt`. */
export function reflectedByErp(postedAt: Date | null, reportedAt: Date | undefined): boolean {
  return postedAt !== null && reportedAt !== undefined && reportedAt.getTime() > postedAt.getTime();
}

/** Per invoice: what the ledger's amount_open does not include yet (decimal strings). */
export function pendingRelief(rows: readonly ReliefRow[], reportedAt: ReadonlyMap<string, Date>): Map<string, string> {
  const sums = new Map<string, Money>();
  for (const r of rows) {
    if (reflectedByErp(r.posted_at, reportedAt.get(r.invoice_id))) continue;
    sums.set(r.invoice_id, (sums.get(r.invoice_id) ?? new Money(0)).plus(r.relieved));
  }
  return new Map([...sums].map(([id, v]) => [id, v.toFixed()]));
}

/**
 * What cash application has taken off invoices that the ledger's `amount_open` does not show yet,
 * per invoice: amount paid + discount + withheld + adjustment of the allocations of payments with
 * the given statuses, except those the ERP already reflects (the rule above).
 */
export async function relievedByInvoice(
  db: Db | Knex.Transaction,
  organizationId: string,
  statuses: readonly PaymentStatus[],
  opts: { invoiceIds?: readonly string[]; excludePaymentId?: string } = {},
): Promise<Map<string, string>> {
  const { rows, reportedAt } = await reliefRows(db, organizationId, statuses, opts);
  return pendingRelief(rows, reportedAt);
}
