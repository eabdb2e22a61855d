/**
 * The payment-receipt email: what was received, when, and which invoices it paid. Pure rendering
 * (plain text and HTML); amounts are exact decimal strings written with their currency's minor units.
 */
import { Money } from '@rp/platform';
import { formatInCurrency } from './payments.js';

export interface ReceiptLine {
  invoice_number: string;
  currency: string;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
}

export interface ReceiptInput {
  organizationName: string;
  partnerName: string;
  amount: string;
  currency: string;
  /** YYYY-MM-DD, or null when the bank gave no date */
  paymentDate: string | null;
  reference: string | null;
  lines: ReceiptLine[];
}

/**
 * "1234567.5" → "1,234,567.50": grouped, with the currency's minor units (JPY "1,190", KWD
 * "1,190.000"; 2 when no currency is given), rounded half up.
 */
export function formatAmount(value: string, currency?: string): string {
  const fixed = currency ? formatInCurrency(value, currency) : new Money(value).toFixed(2);
  const negative = fixed.startsWith('-');
  const [whole, fraction] = (negative ? fixed.slice(1) : fixed).split('.');
  return `${negative ? '-' : ''}${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction === undefined ? '' : `.${fraction}`}`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderPaymentReceipt(r: ReceiptInput): { subject: string; text: string; html: string } {
  const money = (v: string, currency: string) => `${currency} ${formatAmount(v, currency)}`;
  const total = money(r.amount, r.currency);
  const subject = `Payment received: ${total}${r.paymentDate ? ` on ${r.paymentDate}` : ''}`;
  const reductions = (l: ReceiptLine) =>
    [
      new Money(l.amount_discount).isZero() ? null : `discount ${money(l.amount_discount, l.currency)}`,
      new Money(l.amount_withheld).isZero() ? null : `withheld ${money(l.amount_withheld, l.currency)}`,
    ].filter(Boolean) as string[];

  const text = [
    `Dear ${r.partnerName},`,
    '',
    `thank you for your payment. ${r.organizationName} has received ${total}${r.paymentDate ? ` on ${r.paymentDate}` : ''}.`,
    ...(r.reference ? [`Bank reference: ${r.reference}`] : []),
    '',
    r.lines.length ? 'It was applied to these invoices:' : 'It has not been applied to an invoice yet.',
    ...r.lines.map((l) => {
      const extra = reductions(l);
      return `  Invoice ${l.invoice_number}: ${money(l.amount_paid, l.currency)}${extra.length ? ` (${extra.join(', ')})` : ''}`;
    }),
    '',
    `Kind regards,`,
    r.organizationName,
    '',
  ].join('\n');

  const rows = r.lines
    .map((l) => {
      const extra = reductions(l);
      return (
        `<tr><td>${escapeHtml(l.invoice_number)}</td><td style="text-align:right">${escapeHtml(money(l.amount_paid, l.currency))}</td>` +
        `<td>${escapeHtml(extra.join(', '))}</td></tr>`
      );
    })
    .join('');
  const html =
    `<!doctype html><html><body style="font-family:sans-serif">` +
    `<p>Dear ${escapeHtml(r.partnerName)},</p>` +
    `<p>thank you for your payment. ${escapeHtml(r.organizationName)} has received <strong>${escapeHtml(total)}</strong>` +
    `${r.paymentDate ? ` on ${escapeHtml(r.paymentDate)}` : ''}.</p>` +
    (r.reference ? `<p>Bank reference: ${escapeHtml(r.reference)}</p>` : '') +
    (r.lines.length
      ? `<p>It was applied to these invoices:</p><table cellpadding="4"><thead><tr><th>Invoice</th><th>Amount paid</th><th></th></tr></thead><tbody>${rows}</tbody></table>`
      : '<p>It has not been applied to an invoice yet.</p>') +
    `<p>Kind regards,<br>${escapeHtml(r.organizationName)}</p></body></html>`;
  return { subject, text, html };
}
