/**
 * Reading one part of a message (its body, or one attachment) as remittance advice: the invoice
 * lines (invoice number, amount paid, discount, withheld), the stated total, and the payment's own
 * fields. Pure: text (and a spreadsheet's rows) in, a reading out.
 *
 * Tables are found by their header row (column names in English, German, French, Dutch or Spanish:
 * vocabulary.ts); each following row with an invoice number and amounts is a line, until a total
 * row. Rows of a CSV or XLSX file are read cell by cell; text rows (a PDF's text, an HTML table as
 * text, a plain-text list) by the amounts written in them, placed in the header's amount columns.
 * Outside tables, a line naming an invoice (`Invoice 4711: 1.234,56 EUR`, or a number the ledger
 * knows) with amounts is a line too.
 */
import { Money, sumMoney } from '@rp/platform';
import { decimalMarkOf, type DecimalMark } from './amounts.js';
import { paymentFields, type PaymentFields } from './fields.js';
import {
  cellAmounts,
  headerOf,
  inlineAmounts,
  invoiceNumberOf,
  knownNumber,
  placeAmounts,
  rowTokens,
  structuredRow,
  textRow,
  type Header,
  type KnownNumbers,
  type Row,
  type RowAmounts,
} from './rows.js';
import { ADVICE_WORDING, AMOUNT_ROLES, fold, INVOICE_LEAD, isTotalLine } from './vocabulary.js';

export interface AdviceLine {
  invoice_number: string;
  amount_paid: string;
  amount_discount: string;
  amount_withheld: string;
}

export interface AdviceReading {
  lines: AdviceLine[];
  /** the total the advice states (of the amounts paid), when it states one */
  stated_total: string | null;
  fields: PaymentFields;
  /** the part says it is remittance advice (its wording, or a table with a paid column) */
  is_advice: boolean;
  /** what the reader is unsure of, as `code: detail` strings */
  uncertainties: string[];
}

export interface ReadContext {
  /** invoice numbers the ledger knows, by numberKey / strippedKey (rows.ts) */
  known?: KnownNumbers;
  /** open amounts of the ledger's invoices by their number: a total paid for several named invoices is split by them when it equals their sum */
  openAmounts?: ReadonlyMap<string, string>;
  /** US English dates (month first) */
  usDates?: boolean;
}

const fmt = (v: string | Money) => new Money(v).toFixed(2);

/** Several invoices a sentence names with one amount between them (`Rechnungen 4711 und 4712 über 1.247,58 EUR`). */
interface Group {
  numbers: string[];
  amount: string | null;
}

/** The invoices a text names: numbers the ledger knows, and numbers after an invoice word with those joined to them (`4711, 4712 und 4713`). */
function namedNumbers(text: string, numbers: readonly { text: string; index: number; end: number }[], known: KnownNumbers): string[] {
  const out: string[] = [];
  let chained = false;
  numbers.forEach((t, i) => {
    const k = knownNumber(t.text, known);
    const between = i > 0 ? text.slice(numbers[i - 1]!.end, t.index) : '';
    chained = INVOICE_LEAD.test(text.slice(0, t.index)) || (chained && /^\s*(?:,|;|&|\/|and|und|et|en|y|sowie)?\s*$/i.test(between));
    const n = k ?? (chained ? t.text.replace(/[.:,;]+$/, '') : null);
    if (n && !out.includes(n)) out.push(n);
  });
  return out;
}

/**
 * Invoices a sentence names each with its own amount in parentheses (`4711 (1.190,00 EUR); 4712
 * (59,50 EUR) und 4713 (20,00 EUR)`): one line per pair, when the sentence has at least two pairs and
 * each number is one the ledger knows or follows an invoice word.
 */
function pairedLines(text: string, hint: DecimalMark, ctx: ReadContext): AdviceLine[] | null {
  const { amounts, numbers } = rowTokens(text, hint, ctx.usDates ?? false);
  if (amounts.length < 2) return null;
  const named = new Set(namedNumbers(text, numbers, ctx.known ?? new Map()));
  const lines: AdviceLine[] = [];
  // a number right after the previous pair's closing parenthesis (`…) and 4712 (…`) continues the list
  let listEnd = -1;
  for (const t of numbers) {
    const n = knownNumber(t.text, ctx.known ?? new Map()) ?? t.text.replace(/[.:,;]+$/, '');
    const continues = listEnd >= 0 && /^\s*(?:,|;|&|and|und|et|en|y|sowie)?\s*$/i.test(text.slice(listEnd, t.index));
    if (!named.has(n) && !continues) continue;
    // the amount token may carry the opening parenthesis itself (`(772.75`)
    const amount = amounts.find((a) => {
      const before = text.slice(t.end, a.index);
      return a.index > t.end && /^\s*\(?\s*[^\s\d()]{0,3}\s*$/.test(before) && (before.includes('(') || a.raw.startsWith('(')) && /^\s*[A-Z]{0,3}\s*[^\s\d()]?\s*\)/.test(text.slice(a.end));
    });
    if (!amount || amount.value.startsWith('-')) continue;
    lines.push({ invoice_number: n.slice(0, 100), amount_paid: amount.value, amount_discount: '0', amount_withheld: '0' });
    listEnd = text.indexOf(')', amount.end) + 1;
  }
  return lines.length >= 2 ? lines : null;
}

function rowLine(row: Row, header: Header | null, hint: DecimalMark, ctx: ReadContext): { line: AdviceLine; unclear: boolean } | { group: Group } | null {
  const known = ctx.known ?? new Map<string, string>();
  const { amounts, numbers } = rowTokens(row.text, hint, ctx.usDates ?? false);
  if (!header) {
    const named = namedNumbers(row.text, numbers, known);
    const outside = amounts.filter((a) => !numbers.some((t) => a.index < t.end && t.index < a.end));
    if (named.length >= 2 && outside.length <= 1) return { group: { numbers: named, amount: outside[0]?.value ?? null } };
  }
  let invoice = invoiceNumberOf(row, header, numbers, known);
  if (!invoice) return null;
  // amounts inside the invoice number's own text are not amounts
  const invoiceToken = numbers.find((t) => t.text === invoice || knownNumber(t.text, known) === invoice);
  const own = amounts.filter((a) => !invoiceToken || a.end <= invoiceToken.index || a.index >= invoiceToken.end);
  let amountsRead: RowAmounts | null = null;
  if (header?.cellRoles && row.cells.length === header.cellRoles.length) amountsRead = cellAmounts(row, header, hint);
  else if (header) {
    const columns = header.spans.filter((s) => AMOUNT_ROLES.includes(s.role));
    amountsRead = placeAmounts(columns, own, header.cellRoles !== null && !row.structured);
  } else {
    // outside a table: only a line that names an invoice or a number the ledger knows
    const named = invoiceToken && (INVOICE_LEAD.test(row.text.slice(0, invoiceToken.index)) || knownNumber(invoiceToken.text, known) !== null);
    const listed = invoiceToken && /^[\s>]*(?:[-*•·]\s*)?$/.test(row.text.slice(0, invoiceToken.index)) && invoiceToken.text.length >= 4;
    if (!named && !listed) return null;
    amountsRead = inlineAmounts(row.text, own);
  }
  if (!amountsRead) return null;
  invoice = invoice.replace(/[.:,;]+$/, '');
  return {
    line: { invoice_number: invoice.slice(0, 100), amount_paid: amountsRead.paid, amount_discount: amountsRead.discount, amount_withheld: amountsRead.withheld },
    unclear: amountsRead.unclear,
  };
}

/** The amount paid a total row states: under the paid column when the header has one, else its last amount. */
function totalOf(row: Row, header: Header | null, hint: DecimalMark, ctx: ReadContext): string | null {
  const { amounts } = rowTokens(row.text, hint, ctx.usDates ?? false);
  if (amounts.length === 0) return null;
  if (header) {
    if (header.cellRoles && row.cells.length === header.cellRoles.length) {
      const r = cellAmounts(row, header, hint);
      if (r) return r.paid;
    }
    const r = placeAmounts(header.spans.filter((s) => AMOUNT_ROLES.includes(s.role)), amounts, header.cellRoles !== null && !row.structured);
    if (r) return r.paid;
  }
  return amounts[amounts.length - 1]!.value;
}

/** The invoice a line names without amounts (`Invoice no.: 4711`, `Rechnung 4711`), starting a record written down the page; null otherwise. */
function recordStart(row: Row, hint: DecimalMark, ctx: ReadContext): string | null {
  const { amounts, numbers } = rowTokens(row.text, hint, ctx.usDates ?? false);
  if (amounts.length > 0) return null;
  const known = ctx.known ?? new Map<string, string>();
  for (const t of numbers) {
    const k = knownNumber(t.text, known);
    if (k) return k;
    if (INVOICE_LEAD.test(row.text.slice(0, t.index))) return t.text.replace(/[.:,;]+$/, '');
  }
  return null;
}

/** One invoice gets the whole amount; several get their open amounts when those add up to it exactly; else null. */
function splitByOpenAmounts(numbers: string[], amount: string, open: ReadonlyMap<string, string> | undefined): AdviceLine[] | null {
  const line = (n: string, paid: string): AdviceLine => ({ invoice_number: n.slice(0, 100), amount_paid: paid, amount_discount: '0', amount_withheld: '0' });
  if (amount.startsWith('-')) return null;
  if (numbers.length === 1) return [line(numbers[0]!, amount)];
  if (!open || numbers.some((n) => !open.has(n))) return null;
  if (!sumMoney(numbers.map((n) => open.get(n)!)).eq(amount)) return null;
  return numbers.map((n) => line(n, new Money(open.get(n)!).toFixed()));
}

/** Reads one part: `text`, and `rows` when the part is a spreadsheet (CSV, XLSX). */
export function readAdvice(part: { text: string; rows?: string[][] | null }, ctx: ReadContext = {}): AdviceReading {
  const rows: Row[] = part.rows ? part.rows.map(structuredRow) : part.text.split('\n').map(textRow);
  const texts = rows.map((r) => r.text);
  const hint = decimalMarkOf(texts);
  const lines: AdviceLine[] = [];
  const uncertainties: string[] = [];
  const tableRows = new Set<number>();
  let header: Header | null = null;
  const groups: Group[] = [];
  let paidColumn = false;
  let statedTotal: string | null = null;
  // a record written down the page (`Invoice: 4711` / `Amount: 1.190,00` / `Discount: 23,80`), gathered until a blank line or the next invoice
  let pending: { invoice: string; rows: number[]; text: string } | null = null;
  const flush = () => {
    if (!pending) return;
    const { invoice, rows: at, text } = pending;
    pending = null;
    const amounts = rowTokens(text, hint, ctx.usDates ?? false).amounts;
    const read = amounts.length ? inlineAmounts(text, amounts) : null;
    if (!read) return;
    lines.push({ invoice_number: invoice, amount_paid: read.paid, amount_discount: read.discount, amount_withheld: read.withheld });
    for (const r of at) tableRows.add(r);
  };

  rows.forEach((row, i) => {
    if (!row.text.trim()) {
      flush();
      return;
    }
    if (pending && header === null) {
      const t = rowTokens(row.text, hint, ctx.usDates ?? false);
      if (t.amounts.length > 0 && !t.numbers.some((n) => INVOICE_LEAD.test(row.text.slice(0, n.index))) && pending.rows.length < 6) {
        pending.rows.push(i);
        pending.text += `\n${row.text}`;
        return;
      }
      flush();
    }
    // before the total check: such a sentence often ends with the total it adds up to
    const paired = header === null ? pairedLines(row.text, hint, ctx) : null;
    if (paired) {
      lines.push(...paired);
      tableRows.add(i);
      return;
    }
    const h = headerOf(row, hint);
    if (h) {
      header = h;
      paidColumn ||= h.spans.some((s) => s.role === 'paid');
      tableRows.add(i);
      return;
    }
    if (isTotalLine(row.cells[0]?.text ?? row.text)) {
      const total = totalOf(row, header, hint, ctx);
      if (total !== null && !total.startsWith('-') && (header || lines.length > 0)) {
        // a subtotal per page is followed by the grand total: the last one stands
        statedTotal = total;
        tableRows.add(i);
        // the table ends at its total: later lines are the payment's own fields, not rows
        header = null;
      }
      return;
    }
    const read = rowLine(row, header, hint, ctx);
    if (read && 'group' in read) {
      groups.push(read.group);
      tableRows.add(i);
      return;
    }
    if (!read) {
      const invoice = header === null ? recordStart(row, hint, ctx) : null;
      if (invoice) pending = { invoice, rows: [i], text: row.text.slice(row.text.indexOf(invoice) + invoice.length) };
      return;
    }
    tableRows.add(i);
    lines.push(read.line);
    if (read.unclear) uncertainties.push(`line_amounts_unclear: ${read.line.invoice_number}`);
  });

  flush();
  const fields = paymentFields(texts, tableRows, hint, ctx.usDates ?? false);
  if (lines.length === 0) {
    // no line with its own amount: a total paid for the invoices the text names (a sentence, a bank's payment notice)
    const total = fields.amount ?? statedTotal;
    const named = groups.length
      ? groups
      : [{ numbers: rows.flatMap((r, i) => (tableRows.has(i) ? [] : namedNumbers(r.text, rowTokens(r.text, hint, ctx.usDates ?? false).numbers, ctx.known ?? new Map()))), amount: null }];
    for (const g of named) {
      const numbers = [...new Set(g.numbers)];
      const amount = g.amount ?? (named.length === 1 ? total : null);
      if (numbers.length === 0 || amount === null) continue;
      const split = splitByOpenAmounts(numbers, amount, ctx.openAmounts);
      if (split) lines.push(...split);
      else uncertainties.push(`amount_not_split: ${fmt(amount)} for ${numbers.join(', ')}`);
    }
  }
  if (statedTotal !== null && lines.length > 0) {
    const sum = sumMoney(lines.map((l) => l.amount_paid));
    if (!sum.eq(statedTotal)) uncertainties.push(`total_differs: total ${fmt(statedTotal)}, lines ${fmt(sum)}`);
  }
  const isAdvice = paidColumn || ADVICE_WORDING.test(fold(part.text));
  return { lines, stated_total: statedTotal, fields, is_advice: isAdvice, uncertainties };
}
