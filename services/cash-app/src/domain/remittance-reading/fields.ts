/**
 * The payment's own fields of an advice (date, amount, currency, reference, method, payer), read
 * from labelled values anywhere in the text (`Zahlungsdatum: 14.10.2026`, `Montant du paiement :
 * 2 345,60 EUR`), the label's value being what follows it up to the next label on the line, or the
 * next line when the label stands alone.
 */
import { amountsIn, cellAmount, currencyOf, datesIn, type DecimalMark } from './amounts.js';
import { FIELD_LABELS, fold, looseFold, METHODS, type FieldName } from './vocabulary.js';

export interface PaymentFields {
  payment_date: string | null;
  amount: string | null;
  currency: string | null;
  reference: string | null;
  payer: string | null;
  method: string | null;
}

interface Labelled {
  field: FieldName;
  value: string;
}

/** Every labelled value of one line (the next line's text when a label ends the line). */
function labelledValues(line: string, next: string | undefined): Labelled[] {
  const folded = looseFold(line);
  const hits: { field: FieldName; index: number; end: number }[] = [];
  for (const [field, re] of Object.entries(FIELD_LABELS) as [FieldName, RegExp][]) {
    for (const m of folded.matchAll(re)) {
      if (!hits.some((h) => m.index! < h.end && h.index < m.index! + m[0].length)) hits.push({ field, index: m.index!, end: m.index! + m[0].length });
    }
  }
  hits.sort((a, b) => a.index - b.index);
  return hits.map((h, i) => {
    const raw = line.slice(h.end, hits[i + 1]?.index ?? line.length).replace(/^[\s:=.\-–]+/, '').trim();
    return { field: h.field, value: raw || (i === hits.length - 1 ? (next ?? '').trim() : '') };
  });
}

const REFERENCE_TOKEN = /[A-Za-z0-9][A-Za-z0-9\-/_.]*[A-Za-z0-9]/;

/** The most frequent currency written in the text (codes and symbols), or null. */
export function dominantCurrency(text: string): string | null {
  const counts = new Map<string, number>();
  for (const m of text.matchAll(/(?<![A-Za-z])(?:[A-Z]{3}|US\$|[€$£¥])(?![A-Za-z])/g)) {
    const c = currencyOf(m[0]);
    if (c) counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  const best = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  return best[0]?.[0] ?? null;
}

/** The payment method the text names (`SEPA`, `Überweisung`, `virement`, `cheque`, `ACH`, `wire`), or null. */
export function methodIn(text: string): string | null {
  const f = fold(text);
  for (const [re, method] of METHODS) if (re.test(f)) return method;
  return null;
}

/**
 * The payment's fields from `lines` (lines that are table rows are skipped by the caller). The
 * first labelled value of each field wins; the currency is the labelled one, else the one written
 * beside the amount, else the most frequent in the text.
 */
export function paymentFields(lines: readonly string[], skip: ReadonlySet<number>, hint: DecimalMark, usDates: boolean): PaymentFields {
  const out: PaymentFields = { payment_date: null, amount: null, currency: null, reference: null, payer: null, method: null };
  let amountCurrency: string | null = null;
  lines.forEach((line, i) => {
    if (skip.has(i)) return;
    for (const { field, value } of labelledValues(line, lines[i + 1])) {
      if (!value) continue;
      switch (field) {
        case 'payment_date':
          out.payment_date ??= datesIn(value, usDates)[0]?.value ?? null;
          break;
        case 'amount': {
          if (out.amount) break;
          const a = cellAmount(value, hint) ?? amountsIn(value, hint)[0]?.value ?? null;
          if (a && !a.startsWith('-')) {
            out.amount = a;
            amountCurrency = dominantCurrency(value);
          }
          break;
        }
        case 'currency':
          out.currency ??= currencyOf(value.split(/\s+/)[0]!.toUpperCase()) ?? null;
          break;
        case 'reference': {
          const token = value.match(REFERENCE_TOKEN)?.[0] ?? null;
          if (token && /\d/.test(token)) out.reference ??= token.slice(0, 200);
          break;
        }
        case 'payer':
          if (!/@/.test(value) && /[A-Za-zÀ-ÿ]{2}/.test(value)) out.payer ??= value.replace(/\s{2,}.*$/, '').slice(0, 300);
          break;
        case 'method':
          out.method ??= methodIn(value) ?? value.slice(0, 100);
          break;
      }
    }
  });
  out.currency ??= amountCurrency ?? dominantCurrency(lines.join('\n'));
  out.method ??= methodIn(lines.filter((_, i) => !skip.has(i)).join('\n'));
  return out;
}
