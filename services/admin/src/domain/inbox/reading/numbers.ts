/**
 * Invoice- and customer-number-like tokens: after an invoice or customer keyword in any of the five
 * languages ("invoice 4711", "Rechnung Nr. RE-2026-001", "factures F-12 et F-13", "factuurnummer
 * 2026/0042"), prefixed references anywhere (INV-1234), and bare digit runs outside dates, amounts,
 * phone numbers and the signature. Pure.
 */
import { fold } from './text.js';

const INVOICE_KEYWORD =
  "(?:invoices?|inv|invoice\\s+numbers?|rechnungen|rechnungsnummern?|rechnungsnr|rechnung|rg|re-nr|belegnummer|beleg|facturen|factuurnummers?|factuurnr|factuur|facturas?|factures?|fact|n[o°º] de factura|numero de factura|numeros de factura|numero de facture)";
const CUSTOMER_KEYWORD =
  '(?:customer\\s+(?:no|number|id|account)|account\\s+(?:no|number)|kundennummer|kunden-nr|kundennr|debitorennummer|numero client|n[o°º] client|code client|numero de cliente|n[o°º] de cliente|klantnummer|klantnr|debiteurnummer)';
const NUMBER_WORD = "(?:\\s*(?:no|nr|nos|nrs|number|numbers|nummer|numero|numeros|#|n[o°º]|ref)\\.?)?\\s*[:#]?\\s*";
// a token holds a digit, so a list ends at the next word ("4711 und Rechnungsnummer 4712")
const TOKEN = '((?=[a-z\\-/_.]*\\d)[a-z0-9][a-z0-9\\-/_.]{1,30}[a-z0-9]|\\d{3,})';
// no slash: invoice numbers such as EU/2026/002236 carry them
const JOIN = '\\s*(?:,|;|&|\\+|\\band\\b|\\bund\\b|\\bet\\b|\\by\\b|\\be\\b|\\ben\\b|\\bsowie\\b|\\bas well as\\b)\\s*';

const ONE = `(?:${TOKEN.slice(1, -1)})`;
const KEYWORD_LIST = (keyword: string) => new RegExp(`\\b${keyword}\\.?${NUMBER_WORD}(${ONE}(?:${JOIN}${ONE})*)`, 'gi');
const INVOICE_LIST = KEYWORD_LIST(INVOICE_KEYWORD);
const CUSTOMER_LIST = KEYWORD_LIST(CUSTOMER_KEYWORD);
const PREFIXED = /\b([A-Z]{1,6}[-/_]?\d{3,}(?:[-/]\d{1,8})*|\d{2,4}[-/]\d{3,8})\b/g;
const BARE_DIGITS = /(?<![\d.,/+\-'])\b(\d{4,12})\b(?![.,'](?:\d)|[-/]\d)/g;
const YEAR = /^(19|20)\d{2}$/;

/** a token that is a number of something, not a word, a date or an amount */
function plausible(token: string): boolean {
  if (!/\d/.test(token)) return false;
  if (token.length < 3 || token.length > 32) return false;
  if (/^\d{1,2}[./-]\d{1,2}([./-]\d{2,4})?$/.test(token)) return false; // a date
  if (/^\d{4}-\d{2}-\d{2}$/.test(token)) return false;
  if (/^\d{1,3}([.,]\d{3})*[.,]\d{2}$/.test(token)) return false; // an amount
  if (YEAR.test(token)) return false;
  return true;
}

function clean(token: string): string {
  return token.replace(/[.\-/_]+$/, '');
}

function add(out: string[], token: string): void {
  if (plausible(token) && !out.some((t) => t.toLowerCase() === token.toLowerCase())) out.push(token);
}

function listTokens(list: string): string[] {
  return list
    .split(new RegExp(JOIN, 'i'))
    .map((t) => t.trim())
    .filter(Boolean);
}

/** Invoice numbers named after an invoice keyword, plus prefixed references such as INV-1234. */
export function invoiceNumbersIn(text: string): string[] {
  const out: string[] = [];
  const folded = fold(text);
  INVOICE_LIST.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = INVOICE_LIST.exec(folded))) {
    // recover the original casing from the same span (folding keeps positions for ASCII tokens)
    const span = text.slice(m.index + m[0].length - m[1].length, m.index + m[0].length);
    for (const token of listTokens(span)) add(out, clean(token));
  }
  PREFIXED.lastIndex = 0;
  while ((m = PREFIXED.exec(text))) {
    if (!/^\d/.test(m[1])) add(out, clean(m[1]));
  }
  return out;
}

/** Customer numbers named after a customer keyword. */
export function customerNumbersIn(text: string): string[] {
  const out: string[] = [];
  const folded = fold(text);
  CUSTOMER_LIST.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = CUSTOMER_LIST.exec(folded))) {
    const span = text.slice(m.index + m[0].length - m[1].length, m.index + m[0].length);
    for (const token of listTokens(span)) add(out, clean(token));
  }
  return out;
}

/** Bare runs of 4..12 digits that are not a year, part of a date, an amount or a phone number. */
export function bareNumbersIn(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (/\b(tel|phone|fax|mobile|mobil|telefon|telefoon|tél|tfno|iban|bic|swift|vat|ust|tva|btw|iva|kvk|hrb|zip|plz)\b/i.test(line)) continue;
    if (/\+\d/.test(line)) continue;
    BARE_DIGITS.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = BARE_DIGITS.exec(line))) {
      const t = m[1];
      if (YEAR.test(t)) continue;
      if (!out.includes(t)) out.push(t);
    }
  }
  return out;
}
