/**
 * The ledger the inbox benchmark's mail is about: one organization's customers (names from the
 * matching benchmark's per-country styles, company email domains, and the noise a collector meets:
 * look-alike names, two group companies on one domain, sole traders on gmail.com / gmx.de /
 * outlook.com / web.de, customers whose ledger address is another domain than the one their AP team
 * writes from) and their invoices in five numbering series (SAP-like ten-digit numbers that look
 * like PO numbers and payment document numbers, `RE-2026-0…`, `EU/2026/00…`, `INV-4…`, and plain
 * six-digit numbers that look like postal codes and order numbers). Deterministic for a seed.
 * Amounts are integer cents.
 */
import { companyName } from '../matching/names.js';
import { Rng } from '../matching/random.js';

export type Currency = 'EUR' | 'GBP' | 'USD' | 'CHF';
export type Series = 'sap' | 're' | 'eu' | 'inv' | 'plain';

export interface InboxCustomer {
  /** customer_code = the platform's account_number */
  code: string;
  name: string;
  country: string;
  currency: Currency;
  /** the address in the ledger (the customer push's smtp_addr) */
  email: string;
  /** the domain its accounts-payable staff write from (usually the ledger address's) */
  mailDomain: string;
  /** a free-mail address (gmail.com…): the domain says nothing */
  freeMail: boolean;
  /** the code of a customer with a look-alike name or the same domain */
  twin: string | null;
  series: Series;
  /** the language its staff write in */
  language: 'en' | 'de' | 'fr' | 'nl';
  /** the AP clerk's name (signature, From display name) */
  clerk: string;
}

export interface InboxInvoice {
  number: string;
  customer: string;
  currency: Currency;
  /** cents */
  amount: number;
  documentDate: string;
  netDueDate: string;
  statusOpen: boolean;
  /** the customer's PO number */
  po: string | null;
}

export interface InboxLedger {
  seed: number;
  customers: InboxCustomer[];
  invoices: InboxInvoice[];
}

const TLD: Record<string, string> = { DE: 'de', AT: 'at', CH: 'ch', FR: 'fr', NL: 'nl', BE: 'be', GB: 'co.uk', US: 'com' };
const LANGUAGE: Record<string, InboxCustomer['language']> = { DE: 'de', AT: 'de', CH: 'de', FR: 'fr', BE: 'fr', NL: 'nl', GB: 'en', US: 'en' };
const SERIES: Record<string, Series[]> = { DE: ['sap', 're', 'plain'], AT: ['sap', 're'], CH: ['sap'], FR: ['eu', 'sap'], BE: ['eu'], NL: ['eu', 'sap'], GB: ['inv', 'plain'], US: ['inv', 'plain'] };
const COUNTRIES: [string, number][] = [['DE', 34], ['AT', 6], ['CH', 5], ['FR', 14], ['BE', 4], ['NL', 12], ['GB', 14], ['US', 11]];
const FIRST = ['Anna', 'Jonas', 'Claire', 'Pieter', 'Sarah', 'Thomas', 'Julia', 'Marc', 'Sophie', 'Daan', 'Emma', 'Lukas', 'Chloé', 'Ruben', 'Laura', 'Michael', 'Inès', 'Sanne', 'James', 'Olivia'];
const LAST = ['Schneider', 'Keller', 'Dubois', 'de Jong', 'Miller', 'Fischer', 'Lefèvre', 'Bakker', 'Walker', 'Hofmann', 'Moreau', 'Visser', 'Taylor', 'Brunner', 'Girard', 'Smit'];

export const CURRENCY_OF = (r: Rng, country: string): Currency =>
  country === 'US' ? 'USD' : country === 'GB' ? (r.chance(0.85) ? 'GBP' : 'EUR') : country === 'CH' ? (r.chance(0.6) ? 'CHF' : 'EUR') : 'EUR';

/** "Müller Logistik GmbH" → "mueller-logistik" */
export function slug(name: string): string {
  return name
    .replace(/\b(GmbH & Co\. KG|GmbH|AG|KG|e\.K\.|SE|OG|SAS|SA|SARL|B\.V\.|N\.V\.|BV|NV|SRL|Ltd|Limited|PLC|Inc\.|LLC|Corp\.)$/, '')
    .replace(/ä/g, 'ae').replace(/ö/g, 'oe').replace(/ü/g, 'ue').replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

const AP_LOCAL: Record<InboxCustomer['language'], string[]> = {
  en: ['accounts.payable', 'ap', 'payables', 'finance'],
  de: ['buchhaltung', 'kreditoren', 'rechnungswesen', 'finanzen'],
  fr: ['comptabilite', 'fournisseurs', 'compta'],
  nl: ['crediteuren', 'administratie', 'financien'],
};

export class InvoiceNumbers {
  private next: Record<Series, number> = { sap: 10_000, re: 1_000, eu: 2_000, inv: 10_000, plain: 500_000 };
  constructor(private readonly r: Rng) {}
  take(series: Series): string {
    const n = (this.next[series] += this.r.int(1, 4));
    switch (series) {
      case 'sap':
        return `90000${String(n).padStart(5, '0')}`;
      case 're':
        return `RE-2026-0${String(n).padStart(4, '0')}`;
      case 'eu':
        return `EU/2026/00${String(n).padStart(4, '0')}`;
      case 'inv':
        return `INV-4${String(n).padStart(5, '0')}`;
      case 'plain':
        return String(n);
    }
  }
}

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

const minDate = (a: string, b: string) => (a < b ? a : b);

function grossCents(r: Rng): number {
  if (r.chance(0.2)) return r.pick([250, 480, 500, 750, 1000, 1250, 2000, 2500, 5000]) * 100 * r.int(1, 3);
  return Math.round(Math.exp(Math.log(60) + r.float() * Math.log(800)) * 100 * r.pick([1.19, 1.2, 1.21, 1.07, 1]));
}

/** The customers and their invoices; `openPerCustomer` on average (a few accounts hold many). */
export function generateLedger(seed: number, customers = 96, openPerCustomer = 14): InboxLedger {
  const r = new Rng(seed);
  const out: InboxCustomer[] = [];
  const names = new Set<string>();
  const add = (name: string, country: string, opts: Partial<InboxCustomer> = {}): InboxCustomer => {
    const language = LANGUAGE[country] ?? 'en';
    const domain = `${slug(name)}.${TLD[country] ?? 'com'}`;
    const c: InboxCustomer = {
      code: `C${10001 + out.length}`,
      name,
      country,
      currency: CURRENCY_OF(r, country),
      email: `${r.pick(AP_LOCAL[language])}@${domain}`,
      mailDomain: domain,
      freeMail: false,
      twin: null,
      series: r.chance(0.85) ? SERIES[country]![0]! : r.pick(SERIES[country]!),
      language,
      clerk: `${r.pick(FIRST)} ${r.pick(LAST)}`,
      ...opts,
    };
    names.add(name);
    out.push(c);
    return c;
  };
  // look-alike names every clerk confuses; the first pair shares one group domain
  const a = add('Müller Logistik GmbH', 'DE');
  const b = add('Müller Logistik AG', 'DE', { email: 'buchhaltung.ag@mueller-logistik.de', mailDomain: 'mueller-logistik.de' });
  a.twin = b.code;
  b.twin = a.code;
  const c = add('Nordwind Handels GmbH', 'DE');
  const d = add('Nordwind Handel GmbH', 'DE');
  c.twin = d.code;
  d.twin = c.code;
  const e = add('Dupont Emballages SAS', 'FR');
  const f = add('Emballages Dupont SA', 'BE', { email: `compta.be@${slug('Dupont Emballages SAS')}.fr`, mailDomain: `${slug('Dupont Emballages SAS')}.fr` });
  e.twin = f.code;
  f.twin = e.code;
  // sole traders and small firms on free mail: the domain is shared by thousands
  for (const [name, country, mail] of [
    ['Hans Weber Elektro e.K.', 'DE', 'gmx.de'], ['Petra Lange Grafikdesign', 'DE', 'web.de'], ['Bakkerij Visser', 'NL', 'gmail.com'],
    ['Atelier Girard', 'FR', 'yahoo.fr'], ['Taylor Joinery', 'GB', 'gmail.com'], ['Reed Home Services LLC', 'US', 'gmail.com'],
    ['Karl Brunner Sanitär', 'CH', 'gmail.com'], ['De Jong Schilderwerken', 'NL', 'outlook.com'],
  ] as const) {
    const local = slug(name).replace(/-/g, '.');
    add(name, country, { email: `${local}@${mail}`, mailDomain: mail, freeMail: true });
  }
  while (out.length < customers) {
    const country = r.weighted(COUNTRIES);
    const { name } = companyName(r, country);
    // one company per domain, beyond the group and free-mail domains shared on purpose above
    if (names.has(name) || out.some((c) => c.mailDomain === `${slug(name)}.${TLD[country] ?? 'com'}`)) continue;
    const cust = add(name, country);
    // some AP teams write from another domain than the ledger's address (a group's shared service centre)
    if (r.chance(0.08)) cust.mailDomain = `ssc.${slug(name)}-group.com`;
  }
  const numbers = new InvoiceNumbers(r);
  const invoices: InboxInvoice[] = [];
  const weights = out.map(() => 0.3 + r.float() ** 2 * 2);
  const totalWeight = weights.reduce((s, w) => s + w, 0);
  out.forEach((cust, i) => {
    const open = Math.max(4, Math.round((weights[i]! / totalWeight) * openPerCustomer * out.length));
    const closed = r.int(1, 3);
    for (let k = 0; k < open + closed; k++) {
      const documentDate = addDays('2026-11-15', -r.int(5, 120));
      invoices.push({
        number: numbers.take(r.chance(0.9) ? cust.series : r.pick(SERIES[cust.country]!)),
        customer: cust.code,
        currency: cust.currency,
        amount: grossCents(r),
        documentDate,
        // every customer has an invoice overdue by the corpus's days, so our reminder reaches each one
        netDueDate: k === 0 ? minDate(addDays(documentDate, r.pick([14, 30, 30, 45, 60])), '2026-11-10') : addDays(documentDate, r.pick([14, 30, 30, 45, 60])),
        statusOpen: k < open,
        po: r.chance(0.5) ? `45000${r.digits(5)}` : null,
      });
    }
  });
  return { seed, customers: out, invoices };
}

/** The middleware push record of a customer (spec 4.3.17). */
export function customerPushRecord(c: InboxCustomer): Record<string, unknown> {
  return {
    customer_code: c.code,
    name1: c.name,
    street: 'Hauptstrasse',
    house_num1: '1',
    post_code1: '10115',
    city1: 'Berlin',
    country: c.country,
    company_code: '1000',
    smtp_addr: c.email,
    search_term: c.name.split(' ')[0]!.toUpperCase().slice(0, 20),
  };
}

/** The middleware push record of an invoice (spec 4.3.16). */
export function invoicePushRecord(i: InboxInvoice): Record<string, unknown> {
  const cents = `${Math.floor(i.amount / 100)}.${String(i.amount % 100).padStart(2, '0')}`;
  return {
    document_number: i.number,
    company_code: '1000',
    fiscal_year: '2026',
    customer_code: i.customer,
    currency: i.currency,
    debit_credit_indicator: 'S',
    document_type: 'RV',
    reference: i.po ?? '',
    text: 'Lieferung',
    document_date: i.documentDate,
    net_due_date: i.netDueDate,
    posting_date: i.documentDate,
    clearing_date: i.statusOpen ? null : addDays(i.netDueDate, 2),
    amount_in_document_currency: cents,
    status_open: i.statusOpen,
  };
}
