/**
 * How payers write invoice numbers into a transfer's remittance information: as issued, and the noisy
 * forms the benchmark measures (prefix dropped, glued, leading zeros dropped, separators changed, a
 * one-digit typo, beside a currency amount or a date).
 */
import type { Rng } from './random.js';
import type { Doc, Series } from './world.js';

export type Noise = 'prefix_dropped' | 'glued' | 'zeros_dropped' | 'separators' | 'typo';

/** The series a noise applies to (a plain 6-digit number has no prefix, separators or leading zeros). */
export const NOISE_SERIES: Record<Noise, Series[]> = {
  prefix_dropped: ['re', 'eu', 'inv'],
  glued: ['re', 'eu', 'inv'],
  zeros_dropped: ['re', 'eu'],
  separators: ['re', 'eu', 'inv'],
  typo: ['sap', 're', 'eu', 'inv', 'plain'],
};

/** `number` written with `noise`; null when the noise does not apply to it. */
export function noisy(number: string, noise: Noise, r: Rng): string | null {
  switch (noise) {
    case 'prefix_dropped': {
      // "RE-2026-04711" → "2026-04711", "INV-412345" → "412345", "EU/2026/004711" → "2026/004711"
      const m = /^[A-Z]+[-/](.+)$/.exec(number);
      return m ? m[1]! : null;
    }
    case 'glued':
      return /[-/]/.test(number) ? number.replace(/[-/]/g, '') : null;
    case 'zeros_dropped': {
      // "RE-2026-04711" → "RE-2026-4711", "EU/2026/004711" → "EU/2026/4711"
      const m = /^(.*[-/])(0+)(\d+)$/.exec(number);
      return m ? `${m[1]}${m[3]}` : null;
    }
    case 'separators': {
      if (!/[-/]/.test(number)) return null;
      const sep = number.includes('/') ? r.pick(['-', ' ', '.']) : r.pick(['/', ' ', '.', '_']);
      return number.replace(/[-/]/g, sep);
    }
    case 'typo': {
      // a digit of the running number (the last five digits after the last separator), not the prefix or the year
      const lastSep = Math.max(number.lastIndexOf('-'), number.lastIndexOf('/'));
      const candidates: number[] = [];
      for (let i = Math.max(lastSep + 1, number.length - 5); i < number.length; i++) if (/\d/.test(number[i]!)) candidates.push(i);
      if (candidates.length === 0) return null;
      const at = r.pick(candidates);
      const old = Number(number[at]);
      const digit = (old + r.int(1, 9)) % 10;
      return number.slice(0, at) + String(digit) + number.slice(at + 1);
    }
  }
}

/** A remittance text quoting `refs` (invoice numbers or PO numbers) as customers write it. */
export function quoting(refs: string[], r: Rng, lang: 'de' | 'en' | 'fr' = 'de'): string {
  const list = refs.join(r.pick([', ', ' ', ' / ', '+', '; ']));
  const words = {
    de: refs.length > 1 ? ['Rechnungen', 'Re.', 'RG', 'Sammelzahlung Rechnungen'] : ['Rechnung', 'Re.', 'Rechnungsnr.', 'RG-Nr', ''],
    en: refs.length > 1 ? ['Invoices', 'INV', 'Payment of invoices'] : ['Invoice', 'Inv', 'Invoice no.', 'Payment', ''],
    fr: refs.length > 1 ? ['Factures', 'Règlement factures'] : ['Facture', 'Fact.', 'Règlement facture', ''],
  }[lang];
  const word = r.pick(words);
  return word ? `${word} ${list}` : list;
}

export function languageOf(country: string): 'de' | 'en' | 'fr' {
  if (['DE', 'AT', 'CH'].includes(country)) return 'de';
  if (['FR', 'BE'].includes(country)) return 'fr';
  return 'en';
}

/** A date near the booking, written as payers write dates: 12.10.2026, 2026-10-12, 12/10/26. */
export function writtenDate(date: string, r: Rng): string {
  const [y, m, d] = date.split('-');
  return r.pick([`${d}.${m}.${y}`, `${y}-${m}-${d}`, `${d}/${m}/${y!.slice(2)}`, `${d}.${m}.${y!.slice(2)}`]);
}

/** An amount as payers write it in text: 1.190,00 (German), 1,190.00 (English), 970.00. */
export function writtenAmount(cents: number, lang: 'de' | 'en' | 'fr', r: Rng): string {
  const units = Math.floor(cents / 100);
  const frac = String(cents % 100).padStart(2, '0');
  const grouped = (sep: string) => String(units).replace(/\B(?=(\d{3})+(?!\d))/g, sep);
  if (lang === 'de') return r.chance(0.5) ? `${grouped('.')},${frac}` : `${units},${frac}`;
  if (lang === 'fr') return `${grouped(' ')},${frac}`;
  return r.chance(0.5) ? `${grouped(',')}.${frac}` : `${units}.${frac}`;
}

/** The number a payer quotes for a document: its number, or (for some) the PO number on it. */
export function quotedNumber(d: Doc, r: Rng, poShare = 0.15): string {
  return d.reference && r.chance(poShare) ? d.reference : d.number;
}
