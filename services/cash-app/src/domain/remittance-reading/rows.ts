/**
 * One row of an advice as the reader sees it: its text, its cells (a CSV/XLSX row's own cells, or
 * a text line split at tabs, pipes or runs of two or more spaces, with where each cell is written),
 * and the invoice number and amounts in it, each amount given the role of the column it stands in.
 */
import { Money } from '@rp/platform';
import { amountsIn, cellAmount, datesIn, type AmountToken, type DecimalMark } from './amounts.js';
import { AMOUNT_ROLES, cellRole, INVOICE_LEAD, rolesInLine, type ColumnRole, type RoleSpan } from './vocabulary.js';

export interface Cell {
  text: string;
  index: number;
  end: number;
}

export interface Row {
  text: string;
  cells: Cell[];
  /** cells are real (CSV/XLSX): empty cells keep their place */
  structured: boolean;
}

/** A header: the role of each column, in order, with where its label is written. */
export interface Header {
  spans: RoleSpan[];
  /** cells of the header row, when the row is split into cells (roles by cell index) */
  cellRoles: (ColumnRole | null)[] | null;
}

export function textRow(line: string): Row {
  const cells: Cell[] = [];
  const re = /[^\t|]+?(?=\t|\s*\||\s{2,}|$)/g;
  for (const m of line.matchAll(re)) {
    const text = m[0].trim();
    if (text) cells.push({ text, index: m.index! + (m[0].length - m[0].trimStart().length), end: m.index! + m[0].trimEnd().length });
  }
  return { text: line, cells, structured: false };
}

export function structuredRow(cells: string[]): Row {
  let at = 0;
  const out: Cell[] = cells.map((c) => {
    const cell = { text: c.trim(), index: at, end: at + c.length };
    at += c.length + 1;
    return cell;
  });
  return { text: cells.join('\t'), cells: out, structured: true };
}

const hasAmountRole = (roles: readonly (ColumnRole | null)[]) => roles.some((r) => r !== null && AMOUNT_ROLES.includes(r) && r !== 'other_amount');

/**
 * Several columns read as "paid" (`Amount` and `Paid`): the last is the amount paid, an earlier one
 * the invoice amount (when no column is), others are ignored.
 */
function onePaidColumn(roles: (ColumnRole | null)[]): (ColumnRole | null)[] {
  const paid = roles.flatMap((r, i) => (r === 'paid' ? [i] : []));
  if (paid.length < 2) return roles;
  let gross = roles.includes('gross');
  return roles.map((r, i) => {
    if (r !== 'paid' || i === paid[paid.length - 1]) return r;
    if (!gross) {
      gross = true;
      return 'gross';
    }
    return 'other_amount';
  });
}

/** The row's header reading, when it is a header: names an invoice column and at least one amount column, and holds no amount. */
export function headerOf(row: Row, hint: DecimalMark): Header | null {
  if (amountsIn(row.text, hint).length > 0 || row.cells.length === 0) return null;
  if (row.cells.length >= 2) {
    const cellRoles = onePaidColumn(row.cells.map((c) => cellRole(c.text)));
    if (cellRoles.includes('invoice') && hasAmountRole(cellRoles) && cellRoles.filter(Boolean).length >= 2) {
      return { spans: row.cells.flatMap((c, i) => (cellRoles[i] ? [{ role: cellRoles[i]!, index: c.index, end: c.end }] : [])), cellRoles };
    }
  }
  const found = rolesInLine(row.text);
  const roles = onePaidColumn(found.map((s) => s.role));
  const spans = found.map((s, i) => ({ ...s, role: roles[i]! }));
  if (roles.includes('invoice') && hasAmountRole(roles) && spans.length >= 2 && spans.length >= row.text.split(/\s+/).length / 3) return { spans, cellRoles: null };
  return null;
}

/** Normalized key of a document number: upper case letters and digits only. */
export function numberKey(s: string): string {
  return s.toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** The key without a leading letter prefix (`INV-4711` → `4711`, `RE4711` → `4711`), or null when it has none. */
export function strippedKey(s: string): string | null {
  const k = numberKey(s);
  const m = k.match(/^[A-Z]{1,4}(\d[A-Z0-9]*)$/);
  return m ? m[1]! : null;
}

/** Ledger invoice numbers by their keys (numberKey of each, and its strippedKey). */
export type KnownNumbers = ReadonlyMap<string, string>;

interface Token {
  text: string;
  index: number;
  end: number;
}

/** Words that look like document numbers: a digit in them, three characters or more, not a date or an amount. */
export function numberTokens(text: string, taken: readonly { index: number; end: number }[]): Token[] {
  const out: Token[] = [];
  for (const m of text.matchAll(/[A-Za-z0-9][A-Za-z0-9\-/_.#]*[A-Za-z0-9]/g)) {
    const t = { text: m[0], index: m.index!, end: m.index! + m[0].length };
    if (!/\d/.test(t.text) || t.text.length < 3) continue;
    if (taken.some((x) => t.index < x.end && x.index < t.end)) continue;
    if (/^\d{1,2}$/.test(t.text) || /^\d+[.,]\d{1,2}$/.test(t.text)) continue;
    out.push(t);
  }
  return out;
}

/** The ledger's number for a token, when the ledger knows it (as written or without its prefix). */
export function knownNumber(token: string, known: KnownNumbers): string | null {
  const k = numberKey(token);
  return known.get(k) ?? (strippedKey(token) ? known.get(strippedKey(token)!) ?? null : null);
}

/**
 * The invoice number of a row: a number the ledger knows; else the cell of the invoice column;
 * else the number after an invoice word (`Rechnung Nr. 4711`); else the first number-like word (in
 * a table: the one in the invoice column's place among the number columns). Null when none.
 */
export function invoiceNumberOf(row: Row, header: Header | null, tokens: Token[], known: KnownNumbers): string | null {
  for (const t of tokens) {
    const k = knownNumber(t.text, known);
    if (k) return k;
  }
  if (header?.cellRoles && row.cells.length === header.cellRoles.length) {
    const cell = row.cells[header.cellRoles.indexOf('invoice')];
    if (cell && /\d/.test(cell.text) && cell.text.length <= 40) return cell.text.replace(/^#\s*/, '').trim();
  }
  for (const t of tokens) if (INVOICE_LEAD.test(row.text.slice(0, t.index))) return t.text;
  if (header) {
    // the invoice column's place among the columns that hold numbers (invoice, reference)
    const idRoles = header.spans.filter((s) => s.role === 'invoice' || s.role === 'reference').map((s) => s.role);
    const place = Math.max(0, idRoles.indexOf('invoice'));
    return tokens[place]?.text ?? tokens[0]?.text ?? null;
  }
  // outside a table the caller keeps it only when it opens a list item (`- 4711 …`)
  return tokens[0]?.text ?? null;
}

export interface RowAmounts {
  paid: string;
  discount: string;
  withheld: string;
  /** the amounts could be placed in their columns only by a guess */
  unclear: boolean;
}

const ZERO = new Money(0);

function combos(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  if (n < k) return [];
  return [...combos(n - 1, k - 1).map((c) => [...c, n - 1]), ...combos(n - 1, k)];
}

/** paid, discount and withheld from amounts by role; a missing paid column means gross less the others. */
function settle(values: Partial<Record<ColumnRole, Money>>, unclear: boolean): RowAmounts | null {
  const discount = (values.discount ?? ZERO).abs();
  const withheld = (values.withheld ?? ZERO).abs();
  const paid = values.paid ?? (values.gross ? values.gross.minus(discount).minus(withheld) : null);
  if (!paid) return null;
  if (paid.lt(0)) return null;
  return { paid: paid.toFixed(), discount: discount.toFixed(), withheld: withheld.toFixed(), unclear };
}

/**
 * Place `amounts` (in the order written) in the header's amount columns. As many amounts as
 * columns: in order. Fewer (empty cells vanish from PDF text): every placement keeping the order is
 * tried and the one that adds up (gross − discount − withheld = paid), has a paid amount and sits
 * nearest the column labels wins; a placement that does not add up is `unclear`.
 */
export function placeAmounts(columns: readonly RoleSpan[], amounts: readonly AmountToken[], positional: boolean): RowAmounts | null {
  if (amounts.length === 0 || columns.length === 0) return null;
  let list = [...amounts];
  if (list.length > columns.length) list = list.slice(list.length - columns.length);
  let best: { score: number; values: Partial<Record<ColumnRole, Money>>; consistent: boolean } | null = null;
  for (const combo of combos(columns.length, list.length)) {
    const values: Partial<Record<ColumnRole, Money>> = {};
    let distance = 0;
    combo.forEach((col, i) => {
      const role = columns[col]!.role;
      values[role] = (values[role] ?? ZERO).plus(list[i]!.value);
      if (positional) distance += Math.abs((list[i]!.index + list[i]!.end) / 2 - (columns[col]!.index + columns[col]!.end) / 2);
    });
    let score = values.paid ? 4 : values.gross ? 1 : -10;
    let consistent = true;
    if (values.paid && values.gross) {
      consistent = values.gross.minus(values.discount ?? ZERO).minus(values.withheld ?? ZERO).eq(values.paid);
      score += consistent ? 5 : -3;
    }
    if (values.discount && values.paid && values.discount.abs().gt(values.paid.abs()) && !values.gross) score -= 2;
    if (values.discount) score += 0.25;
    score -= distance / 20;
    if (!best || score > best.score) best = { score, values, consistent };
  }
  if (!best) return null;
  const unclear = list.length !== columns.length && !best.consistent;
  return settle(best.values, unclear);
}

/** Amounts of a structured row read cell by cell under the header's columns (empty cells are 0). */
export function cellAmounts(row: Row, header: Header, hint: DecimalMark): RowAmounts | null {
  const values: Partial<Record<ColumnRole, Money>> = {};
  header.cellRoles!.forEach((role, i) => {
    if (!role || !AMOUNT_ROLES.includes(role)) return;
    const v = cellAmount(row.cells[i]?.text ?? '', hint);
    if (v !== null) values[role] = (values[role] ?? ZERO).plus(v);
  });
  return settle(values, false);
}

/**
 * Amounts of a line outside any table, each given the role the words before it name
 * (`abzgl. Skonto 23,80`, `discount 20.00`, `paid 980.00`); unnamed ones: one is the amount paid,
 * several are the invoice amount first and the amount paid last.
 */
export function inlineAmounts(text: string, amounts: readonly AmountToken[]): RowAmounts | null {
  const values: Partial<Record<ColumnRole, Money>> = {};
  const unnamed: Money[] = [];
  amounts.forEach((a, i) => {
    const before = text.slice(i === 0 ? Math.max(0, a.index - 40) : amounts[i - 1]!.end, a.index);
    const spans = rolesInLine(before).filter((s) => AMOUNT_ROLES.includes(s.role));
    const role = spans.length ? spans[spans.length - 1]!.role : null;
    const v = new Money(a.value);
    if (!role || role === 'other_amount') unnamed.push(v);
    else if (role === 'paid' && values.paid) {
      values.gross ??= values.paid;
      values.paid = v;
    } else values[role] = (values[role] ?? ZERO).plus(v);
  });
  if (unnamed.length === 1) {
    if (values.paid) values.gross ??= unnamed[0];
    else if (values.gross && (values.discount || values.withheld)) values.paid = unnamed[0];
    else if (values.gross) values.paid = unnamed[0];
    else values.paid = unnamed[0];
  } else if (unnamed.length >= 2) {
    values.gross ??= unnamed[0];
    values.paid ??= unnamed[unnamed.length - 1];
  }
  const consistent = !values.gross || !values.paid || values.gross.minus(values.discount ?? ZERO).minus(values.withheld ?? ZERO).eq(values.paid);
  return settle(values, !consistent && !values.discount && !values.withheld);
}

/** The dates and amounts written in a row, and the words left that may be document numbers. */
export function rowTokens(text: string, hint: DecimalMark, usDates: boolean) {
  const dates = datesIn(text, usDates);
  const amounts = amountsIn(text, hint).filter((a) => !dates.some((d) => a.index < d.end && d.index < a.end));
  const numbers = numberTokens(text, [...dates, ...amounts]);
  return { dates, amounts, numbers };
}

export { INVOICE_LEAD };
