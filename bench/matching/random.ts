/**
 * Deterministic randomness and money helpers of the matching benchmark: one seeded PRNG (mulberry32),
 * so that the same seed gives the same world, byte for byte, on every machine; amounts as integer
 * cents (bigint-free: benchmark amounts stay far below 2^53 cents); IBANs with valid ISO 13616
 * mod-97 check digits (and the national check digits of the countries that have them).
 */
import { isValidBBAN } from 'ibantools';
import { mulberry32 } from '../support/random.js';


export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** one of `items` with probability proportional to its weight */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    const total = items.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [item, w] of items) {
      x -= w;
      if (x < 0) return item;
    }
    return items[items.length - 1]![0];
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
  digits(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String(this.int(0, 9));
    return s;
  }
  letters(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(65 + this.int(0, 25));
    return s;
  }
}

/** cents → decimal string with `places` decimals (all benchmark currencies have 2). */
export function fmtCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** decimal string → cents (exact for up to 4 decimals; rounds anything finer to the cent, half away from zero). */
export function toCents(value: string | number): number {
  const s = typeof value === 'number' ? value.toFixed(4) : value.trim();
  const m = /^(-?)(\d+)(?:\.(\d{1,4}))?$/.exec(s);
  if (!m) throw new Error(`not a decimal: ${s}`);
  const frac = (m[3] ?? '').padEnd(4, '0');
  const tenThousandths = Number(m[2]) * 10000 + Number(frac);
  const cents = Math.round(tenThousandths / 100);
  return m[1] ? -cents : cents;
}

/** ISO 13616 mod 97 of an IBAN-like string (letters A=10 … Z=35), computed piecewise. */
export function mod97(value: string): number {
  let rest = 0;
  for (const ch of value.toUpperCase()) {
    const code = ch >= 'A' && ch <= 'Z' ? String(ch.charCodeAt(0) - 55) : ch;
    for (const d of code) rest = (rest * 10 + Number(d)) % 97;
  }
  return rest;
}

/** The IBAN of a country and BBAN, with its check digits computed. */
export function ibanOf(country: string, bban: string): string {
  const check = 98 - mod97(bban + country + '00');
  return `${country}${String(check).padStart(2, '0')}${bban}`;
}

/** Whether an IBAN's check digits are valid (rearranged mod 97 = 1). */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(s)) return false;
  return mod97(s.slice(4) + s.slice(0, 4)) === 1;
}

/** BBAN layouts (ECBS IBAN registry lengths) of the countries the benchmark's customers bank in. */
const BBAN: Record<string, (r: Rng) => string> = {
  DE: (r) => r.digits(8) + r.digits(10),
  AT: (r) => r.digits(5) + r.digits(11),
  FR: (r) => r.digits(5) + r.digits(5) + r.digits(11) + r.digits(2),
  NL: (r) => r.letters(4) + r.digits(10),
  BE: (r) => r.digits(12),
  CH: (r) => r.digits(5) + r.digits(12),
  GB: (r) => r.letters(4) + r.digits(6) + r.digits(8),
  IT: (r) => r.letters(1) + r.digits(5) + r.digits(5) + r.digits(12),
  ES: (r) => r.digits(4) + r.digits(4) + r.digits(2) + r.digits(10),
};

/**
 * Where a BBAN carries national check digits (France's RIB key, Belgium's mod 97, Spain's two
 * control digits): a real bank file never holds an account whose national check fails, and the
 * platform's push rejects one.
 */
const NATIONAL_CHECK: Record<string, { at: number; length: number }> = {
  FR: { at: 21, length: 2 },
  BE: { at: 10, length: 2 },
  ES: { at: 8, length: 2 },
};

/** The BBAN with its national check digits set (the first value the country's check accepts; no random draw, so the seed's world stays the same elsewhere). */
function withNationalCheck(country: string, bban: string): string {
  const check = NATIONAL_CHECK[country];
  if (!check) return bban;
  for (let v = 0; v < 10 ** check.length; v++) {
    const candidate = bban.slice(0, check.at) + String(v).padStart(check.length, '0') + bban.slice(check.at + check.length);
    if (isValidBBAN(candidate, country)) return candidate;
  }
  throw new Error(`no national check digits for ${country} ${bban}`);
}

export function randomIban(r: Rng, country: string): string {
  const bban = BBAN[country];
  if (!bban) throw new Error(`no IBAN layout for ${country}`);
  return ibanOf(country, withNationalCheck(country, bban(r)));
}
