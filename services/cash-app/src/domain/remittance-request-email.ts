/**
 * The remittance-request email: a deposit we received and cannot apply, and the question which
 * invoices it pays. Pure rendering (plain text and HTML) of the built-in request; an organization's
 * own template renders through the receipt's template context (receipts.ts) with the deposit as
 * `payment` and the customer's open invoices as `invoices`.
 */
import { formatAmount } from './receipts.js';

export interface RemittanceRequestDeposit {
  amount: string;
  currency: string;
  /** YYYY-MM-DD (booking, else value date), or null when the bank gave none */
  date: string | null;
  /** the bank's reference of the line (else its end-to-end id), or null */
  reference: string | null;
  /** the payer's own payment text, when the bank passed one on */
  details: string | null;
}

export interface RemittanceRequestEmailInput {
  organizationName: string;
  partnerName: string;
  deposit: RemittanceRequestDeposit;
  /** the customer's open invoices, earliest due first (at most OPEN_INVOICES_LISTED are listed) */
  openInvoices: { number: string; due_date: string | null; currency: string; amount_open: string }[];
}

/** Open invoices listed in the built-in request: enough to pick from, short enough to read. */
export const OPEN_INVOICES_LISTED = 25;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderRemittanceRequest(r: RemittanceRequestEmailInput): { subject: string; text: string; html: string } {
  const d = r.deposit;
  const amount = `${d.currency} ${formatAmount(d.amount, d.currency)}`;
  const subject = `Which invoices does your payment of ${amount}${d.date ? ` on ${d.date}` : ''} pay?`;
  const facts: [string, string][] = [
    ['Date', d.date ?? 'not given by the bank'],
    ['Amount', formatAmount(d.amount, d.currency)],
    ['Currency', d.currency],
    ['Reference', d.reference ?? 'none'],
    ...(d.details ? ([['Payment details', d.details]] as [string, string][]) : []),
  ];
  const listed = r.openInvoices.slice(0, OPEN_INVOICES_LISTED);
  const more = r.openInvoices.length - listed.length;
  const invoiceLine = (i: RemittanceRequestEmailInput['openInvoices'][number]) =>
    `Invoice ${i.number}${i.due_date ? `, due ${i.due_date}` : ''}: ${i.currency} ${formatAmount(i.amount_open, i.currency)} open`;

  const text = [
    `Dear ${r.partnerName},`,
    '',
    `${r.organizationName} has received this payment and cannot tell which invoices it pays:`,
    '',
    ...facts.map(([k, v]) => `  ${k}: ${v}`),
    '',
    'Please reply to this email with the invoice numbers it pays and the amount paid on each (any discount or',
    'deduction too). A remittance advice attached as PDF, CSV or Excel is just as welcome.',
    ...(listed.length ? ['', 'Your open invoices with us:', ...listed.map((i) => `  ${invoiceLine(i)}`), ...(more > 0 ? [`  … and ${more} more`] : [])] : []),
    '',
    'Kind regards,',
    r.organizationName,
    '',
  ].join('\n');

  const html =
    `<!doctype html><html><body style="font-family:sans-serif">` +
    `<p>Dear ${escapeHtml(r.partnerName)},</p>` +
    `<p>${escapeHtml(r.organizationName)} has received this payment and cannot tell which invoices it pays:</p>` +
    `<table cellpadding="4">${facts.map(([k, v]) => `<tr><th style="text-align:left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>` +
    '<p>Please reply to this email with the invoice numbers it pays and the amount paid on each (any discount or deduction too). ' +
    'A remittance advice attached as PDF, CSV or Excel is just as welcome.</p>' +
    (listed.length
      ? `<p>Your open invoices with us:</p><ul>${listed.map((i) => `<li>${escapeHtml(invoiceLine(i))}</li>`).join('')}${more > 0 ? `<li>… and ${more} more</li>` : ''}</ul>`
      : '') +
    `<p>Kind regards,<br>${escapeHtml(r.organizationName)}</p></body></html>`;
  return { subject, text, html };
}
