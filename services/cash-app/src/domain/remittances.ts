/**
 * Remittances: linking a remittance advice's lines to ledger invoices by number, judging how far
 * the advice can be trusted (confidence score, reason, uncertainties), and reading CSV advices.
 * Pure functions; amounts are exact decimal strings (decimal.js), never floats.
 */
import { parse } from 'csv-parse/sync';
import { isDecimalString, Money, sumMoney } from '@rp/platform';

import { REMITTANCE_STATUSES, type RemittanceLine, type RemittanceStatus } from '../domain-types/remittances.js';

export { REMITTANCE_STATUSES, type RemittanceLine, type RemittanceStatus };

/** What linking needs to know about a ledger invoice. */
export interface InvoiceCandidate {
  id: string;
  partner_id: string | null;
  document_number: string;
  currency: string;
  amount_open: string;
  status_open: boolean;
}

export interface RemittanceAssessment {
  /** invoice id per line (same order as the lines), null when not linked */
  invoiceIds: (string | null)[];
  partnerId: string | null;
  /** 0..1, 4 decimals */
  score: number;
  reason: string;
  uncertainties: string[];
  /** `no_invoice_matched` when no line could be linked, else null */
  errorCode: string | null;
}

/**
 * Pick the invoice a line means among those with its number: the only one, else the only open one,
 * else (several open ones in different currencies) the only one in the remittance currency.
 */
function pickInvoice(candidates: InvoiceCandidate[], currency: string | null): InvoiceCandidate | 'ambiguous' | null {
  if (candidates.length === 0) return null;
  if (candidates.length === 1) return candidates[0];
  const open = candidates.filter((c) => c.status_open);
  if (open.length === 1) return open[0];
  const inCurrency = (open.length ? open : candidates).filter((c) => c.currency === currency);
  return inCurrency.length === 1 ? inCurrency[0] : 'ambiguous';
}

/**
 * Link the lines and score the result.
 *
 * Each line is worth its total (paid + discount + withheld; equal weights when every total is 0):
 * a line linked to an open invoice in the remittance currency whose open amount covers it counts
 * fully; a linked line with a problem (invoice closed, amount above the open amount, other
 * currency) counts half; an unknown or ambiguous number counts nothing. The weighted share is then
 * reduced when the allocations do not add up to the transaction amount (×0.8), the invoices belong
 * to several partners (×0.7), no partner could be identified (×0.8), the payer name points to
 * another partner than the invoices (×0.9), or an invoice number repeats (×0.9).
 *
 * Uncertainties (strings): `invoice_not_found: <no>`, `ambiguous_invoice: <no>`, `invoice_closed: <no>`,
 * `amount_exceeds_open: <no>`, `currency_mismatch: <no>`, `duplicate_invoice: <no>`, `sum_mismatch`,
 * `multiple_partners`, `partner_not_identified`, `payer_name_mismatch`.
 */
export function assessRemittance(input: {
  lines: RemittanceLine[];
  invoicesByNumber: Map<string, InvoiceCandidate[]>;
  currency: string | null;
  transactionAmount: string | null;
  /** partner whose name the payer name matches, if exactly one does */
  payerPartnerId: string | null;
  partnerNames?: Map<string, string>;
}): RemittanceAssessment {
  const uncertainties: string[] = [];
  const invoiceIds: (string | null)[] = [];
  const seen = new Set<string>();
  let weighted = new Money(0);
  let totalWeight = new Money(0);
  const lineTotals = input.lines.map((l) => sumMoney([l.amount_paid, l.amount_discount, l.amount_withheld]));
  const equalWeights = lineTotals.every((t) => t.isZero());
  const partners = new Map<string, Money>();
  let clean = 0;
  let linked = 0;

  input.lines.forEach((line, i) => {
    const weight = equalWeights ? new Money(1) : lineTotals[i];
    totalWeight = totalWeight.plus(weight);
    if (seen.has(line.invoice_number)) uncertainties.push(`duplicate_invoice: ${line.invoice_number}`);
    seen.add(line.invoice_number);
    const picked = pickInvoice(input.invoicesByNumber.get(line.invoice_number) ?? [], input.currency);
    if (picked === null || picked === 'ambiguous') {
      uncertainties.push(`${picked === null ? 'invoice_not_found' : 'ambiguous_invoice'}: ${line.invoice_number}`);
      invoiceIds.push(null);
      return;
    }
    invoiceIds.push(picked.id);
    linked += 1;
    if (picked.partner_id) partners.set(picked.partner_id, (partners.get(picked.partner_id) ?? new Money(0)).plus(lineTotals[i]));
    const problems: string[] = [];
    if (!picked.status_open) problems.push(`invoice_closed: ${line.invoice_number}`);
    else if (lineTotals[i].greaterThan(picked.amount_open)) problems.push(`amount_exceeds_open: ${line.invoice_number}`);
    if (input.currency && picked.currency !== input.currency) problems.push(`currency_mismatch: ${line.invoice_number}`);
    uncertainties.push(...problems);
    if (problems.length === 0) clean += 1;
    weighted = weighted.plus(problems.length ? weight.div(2) : weight);
  });

  let score = totalWeight.isZero() ? new Money(0) : weighted.div(totalWeight);
  const notes: string[] = [];

  const paid = sumMoney(input.lines.map((l) => l.amount_paid));
  if (input.transactionAmount !== null && !paid.equals(input.transactionAmount)) {
    uncertainties.push('sum_mismatch');
    score = score.times(0.8);
    notes.push(`the amounts paid add up to ${paid.toFixed(2)}, not the transaction amount ${new Money(input.transactionAmount).toFixed(2)}`);
  }

  let partnerId: string | null = null;
  if (partners.size > 1) {
    uncertainties.push('multiple_partners');
    score = score.times(0.7);
    notes.push(`the invoices belong to ${partners.size} different customers`);
  } else if (partners.size === 1) {
    partnerId = [...partners.keys()][0];
    if (input.payerPartnerId && input.payerPartnerId !== partnerId) {
      uncertainties.push('payer_name_mismatch');
      score = score.times(0.9);
      notes.push('the payer name belongs to another customer than the invoices');
    }
  } else if (input.payerPartnerId) {
    partnerId = input.payerPartnerId;
    notes.push('the customer was identified by the payer name only');
  }
  if (!partnerId && partners.size <= 1) {
    uncertainties.push('partner_not_identified');
    score = score.times(0.8);
    notes.push('no customer could be identified');
  }
  if (uncertainties.some((u) => u.startsWith('duplicate_invoice'))) score = score.times(0.9);

  const n = input.lines.length;
  const who = partnerId && input.partnerNames?.get(partnerId) ? ` of ${input.partnerNames.get(partnerId)}` : '';
  const head =
    linked === 0
      ? `None of the ${n} invoice number${n === 1 ? '' : 's'} matched a ledger invoice`
      : `${clean} of ${n} allocation${n === 1 ? '' : 's'} matched open invoices${who} exactly` +
        (linked > clean ? `, ${linked - clean} matched with a problem` : '') +
        (n > linked ? `, ${n - linked} did not match` : '');
  const reason = [head, ...notes].join('; ') + '.';
  return {
    invoiceIds,
    partnerId,
    score: Number(score.toDecimalPlaces(4, Money.ROUND_HALF_UP).toFixed(4)),
    reason,
    uncertainties,
    errorCode: linked === 0 ? 'no_invoice_matched' : null,
  };
}

/** Lower-case letters and digits only, for comparing a payer name with partner names. */
export function normalizeName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The one partner whose name or legal name equals the payer name (normalized); null when none or several. */
export function partnerByPayerName(partners: { id: string; name: string; legal_name: string | null }[], payerName: string | null): string | null {
  if (!payerName) return null;
  const wanted = normalizeName(payerName);
  if (!wanted) return null;
  const hits = partners.filter((p) => normalizeName(p.name) === wanted || (p.legal_name !== null && normalizeName(p.legal_name) === wanted));
  return hits.length === 1 ? hits[0].id : null;
}

export interface CsvProblem {
  line: number;
  field: string;
  msg: string;
}

const HEADER_ALIASES: Record<keyof RemittanceLine, string[]> = {
  invoice_number: ['invoice_number', 'invoice_no', 'invoice', 'invoice_nr', 'document_number', 'invoice_id'],
  amount_paid: ['amount_paid', 'paid', 'amount', 'payment_amount', 'paid_amount'],
  amount_discount: ['amount_discount', 'discount', 'discount_amount', 'discount_taken'],
  amount_withheld: ['amount_withheld', 'withheld', 'withholding', 'withholding_amount', 'amount_withholding'],
};

function headerKey(raw: string): string {
  return raw.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/**
 * Read a CSV remittance advice: a header row naming the columns (invoice number and amount paid
 * required; discount and withheld optional; common spellings accepted, e.g. "Invoice No.",
 * "Amount Paid", "Discount", "Withheld"; other columns ignored), then one line per invoice.
 * Separator `,` or `;` (detected from the header row), fields may be quoted. Amounts are plain
 * decimals with a dot (`1190.00`); an empty discount or withheld cell is 0. Every problem is
 * reported with its line number (1 = the header row).
 */
export function parseRemittanceCsv(text: string): { lines: RemittanceLine[]; problems: CsvProblem[] } {
  const body = text.replace(/^\uFEFF/, '');
  const firstLine = body.split(/\r?\n/, 1)[0] ?? '';
  const delimiter = (firstLine.match(/;/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? ';' : ',';
  let records: string[][];
  try {
    records = parse(body, { delimiter, skip_empty_lines: true, relax_column_count: true, trim: true, bom: true }) as string[][];
  } catch (err) {
    const e = err as Error & { lines?: number };
    return { lines: [], problems: [{ line: e.lines ?? 1, field: 'csv', msg: `Malformed CSV: ${e.message}` }] };
  }
  if (records.length === 0) return { lines: [], problems: [{ line: 1, field: 'csv', msg: 'The CSV is empty; expected a header row and at least one line.' }] };
  const header = records[0].map(headerKey);
  const columns = {} as Record<keyof RemittanceLine, number>;
  const problems: CsvProblem[] = [];
  for (const [field, aliases] of Object.entries(HEADER_ALIASES) as [keyof RemittanceLine, string[]][]) {
    const index = header.findIndex((h) => aliases.includes(h));
    columns[field] = index;
    if (index < 0 && (field === 'invoice_number' || field === 'amount_paid')) {
      problems.push({ line: 1, field, msg: `The header row has no ${field.replace('_', ' ')} column (found: ${records[0].join(', ')}).` });
    }
  }
  if (problems.length) return { lines: [], problems };
  if (records.length === 1) return { lines: [], problems: [{ line: 2, field: 'csv', msg: 'The CSV has a header row but no remittance lines.' }] };

  const lines: RemittanceLine[] = [];
  records.slice(1).forEach((record, i) => {
    const lineNo = i + 2;
    const cell = (field: keyof RemittanceLine) => (columns[field] >= 0 ? (record[columns[field]] ?? '').trim() : '');
    const invoiceNumber = cell('invoice_number');
    if (!invoiceNumber) problems.push({ line: lineNo, field: 'invoice_number', msg: 'The invoice number is empty.' });
    const amounts = {} as Record<'amount_paid' | 'amount_discount' | 'amount_withheld', string>;
    for (const field of ['amount_paid', 'amount_discount', 'amount_withheld'] as const) {
      const raw = cell(field);
      if (raw === '' && field !== 'amount_paid') {
        amounts[field] = '0';
      } else if (!isDecimalString(raw) || raw.startsWith('-') || (raw.split('.')[1]?.length ?? 0) > 4) {
        problems.push({ line: lineNo, field, msg: `${JSON.stringify(raw)} is not a non-negative decimal amount with at most 4 decimals (e.g. 1190.00).` });
      } else {
        amounts[field] = raw;
      }
    }
    lines.push({ invoice_number: invoiceNumber, ...amounts });
  });
  return { lines, problems };
}
