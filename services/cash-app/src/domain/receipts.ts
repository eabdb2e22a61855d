/**
 * The payment-receipt email: what was received, when, and which invoices it paid. Pure rendering
 * (plain text and HTML); amounts are exact decimal strings written with their currency's minor units.
 */
import { customerTotals, Money, type RateToBase, type TemplatePool } from '@rp/platform';
import { formatInCurrency } from './payments.js';


export interface ReceiptLine {
  invoice_number: string;
  /** a credit memo the payment applied: `amount_paid` is its credit (absent = invoice) */
  kind?: 'invoice' | 'credit_memo';
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
      if (l.kind === 'credit_memo') return `  Credit memo ${l.invoice_number}: credit ${money(l.amount_paid, l.currency)} applied`;
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
      if (l.kind === 'credit_memo') {
        return (
          `<tr><td>Credit memo ${escapeHtml(l.invoice_number)}</td><td style="text-align:right">-${escapeHtml(money(l.amount_paid, l.currency))}</td>` +
          '<td>credit applied</td></tr>'
        );
      }
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

// ---------------------------------------------------------------- organization template

export interface ReceiptTemplateInvoice {
  number: string;
  document_date: string | null;
  due_date: string | null;
  currency: string;
  amount: string;
  amount_open: string;
  days_overdue: number;
  is_overdue: boolean;
}

export interface ReceiptTemplateInput {
  customer: { name: string; legal_name: string | null; account_number: string | null; email: string | null; phone: string | null };
  /** the invoices the payment paid (ledger state now: `amount_open` is after the payment); listed earliest due first, then by number */
  invoices: Omit<ReceiptTemplateInvoice, 'days_overdue' | 'is_overdue'>[];
  organization: { name: string; base_currency: string };
  /** sender: the organization (name) at the receipt's From address */
  sender: { name: string; email: string };
  payment: { amount: string; currency: string; date: string | null; reference: string | null };
  /** YYYY-MM-DD in the organization's timezone */
  today: string;
  /** stored rates to the base currency on or before `today`, of the invoices' other currencies (kernel exchangeRatesToBase) */
  rates: ReadonlyMap<string, RateToBase>;
}

/**
 * The variables of a receipt rendered with an organization's template: admin's template catalogue
 * (the one admin validates every template against on save, see admin's collections/liquid.ts), with
 * `invoices` = the invoices this payment paid and `payment` = the payment itself. `overdue_invoices`
 * and `totals` are computed over those invoices the same way admin computes them over open ones:
 * per currency, plus a base-currency figure only where every currency has a rate (kernel
 * customerTotals). Amounts are decimal strings with their currency's minor units ("1761.20", JPY
 * "1190"), no grouping.
 */
export function receiptTemplateContext(r: ReceiptTemplateInput) {
  const invoices: ReceiptTemplateInvoice[] = r.invoices.map((raw) => {
    const i = { ...raw, amount: formatInCurrency(raw.amount, raw.currency), amount_open: formatInCurrency(raw.amount_open, raw.currency) };
    const days = i.due_date && i.due_date < r.today ? Math.round((Date.parse(r.today) - Date.parse(i.due_date)) / 86_400_000) : 0;
    return { ...i, days_overdue: days, is_overdue: days > 0 };
  });
  // as admin lists them: earliest due date first (none last), then by number
  invoices.sort((x, y) => (x.due_date ?? '9999-12-31').localeCompare(y.due_date ?? '9999-12-31') || x.number.localeCompare(y.number));
  const overdue = invoices.filter((i) => i.is_overdue);
  return {
    customer: r.customer,
    invoices,
    overdue_invoices: overdue,
    totals: customerTotals(invoices, r.organization.base_currency, r.rates),
    sender: r.sender,
    organization: r.organization,
    payment: { ...r.payment, amount: formatInCurrency(r.payment.amount, r.payment.currency) },
    today: r.today,
  };
}

/**
 * Render an organization's receipt template (kernel engine: strict, bounded) on the template pool's
 * threads. The body is plain text: it is the text part as rendered, and the HTML part is that text
 * HTML-escaped with its line breaks kept (so a customer's name can never inject markup). A render
 * that fails or exceeds the time limit throws with the engine's message.
 */
export async function renderReceiptTemplate(pool: TemplatePool, template: { subject: string; body: string }, context: ReturnType<typeof receiptTemplateContext>): Promise<{ subject: string; text: string; html: string }> {
  const render = async (field: string, source: string) => {
    const r = await pool.render(source, context);
    if (!r.ok) throw new Error(`${field}: ${r.message}`);
    return r.output;
  };
  const subject = await render('subject', template.subject);
  const text = await render('body', template.body);
  const html = `<!doctype html><html><body style="font-family:sans-serif">${escapeHtml(text).replace(/\r?\n/g, '<br>\n')}</body></html>`;
  return { subject: subject.replace(/[\r\n]+/g, ' ').trim(), text, html };
}
