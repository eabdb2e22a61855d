/**
 * The accounts-receivable world of the matching benchmark: one organization's customers (realistic
 * legal names, look-alike pairs, IBANs with valid check digits or US account + routing numbers) and
 * their documents (several ERP numbering series, customer PO numbers as references, VAT-like amounts,
 * subscriptions with identical amounts, credit memos, closed invoices, ERP-side partial payments,
 * early-payment discount terms), in EUR mostly and USD, GBP and CHF. Deterministic: the same seed
 * gives the same world.
 */
import { companyName, lookAlikeOf } from './names.js';
import { fmtCents, randomIban, Rng } from './random.js';

export type Currency = 'EUR' | 'USD' | 'GBP' | 'CHF';
export type Series = 'sap' | 're' | 'eu' | 'inv' | 'plain';

export interface Customer {
  code: string;
  name: string;
  country: string;
  currency: Currency;
  /** the account the customer pays from: an IBAN, or (US) account number + routing number */
  iban: string | null;
  account: { account_number: string; bank_code: string } | null;
  /** another account of the customer, never seen by the platform before the month's statement */
  otherIban: string | null;
  /** the customer push carries `bank_accounts` with the primary account */
  masterDataAccount: boolean;
  /** the customer code of its look-alike, when it has one */
  twin: string | null;
  subscription: boolean;
}

export interface DiscountTerm {
  due_date: string;
  percent: string;
}

export interface Doc {
  number: string;
  series: Series;
  customer: string;
  kind: 'invoice' | 'credit_memo';
  currency: Currency;
  /** the document amount, cents (positive for credit memos too) */
  amount: number;
  /** what the ERP reports open, cents (0 when closed) */
  open: number;
  statusOpen: boolean;
  /** the customer's PO number, or null */
  reference: string | null;
  documentDate: string;
  netDueDate: string;
  discountTerms: DiscountTerm[];
}

export interface Account {
  key: string;
  currency: Currency;
  iban: string;
  /** the savings account: a source of own-account transfers */
  savings?: boolean;
}

export interface World {
  seed: number;
  organizationName: string;
  accounts: Account[];
  customers: Customer[];
  documents: Doc[];
}

export interface WorldSize {
  customers: number;
  openInvoices: number;
}

export const COUNTRY_WEIGHTS: [string, number][] = [['DE', 45], ['AT', 10], ['FR', 9], ['NL', 7], ['BE', 3], ['IT', 4], ['ES', 2], ['CH', 7], ['GB', 7], ['US', 6]];
const VAT: Record<string, number[]> = { DE: [1.19, 1.19, 1.07], AT: [1.2], FR: [1.2], NL: [1.21], BE: [1.21], IT: [1.22], ES: [1.21], CH: [1.081], GB: [1.2], US: [1] };

export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** The numbering series' document numbers: SAP-style, German ERP, EU subsidiary, US/UK system, plain. */
export class Numbering {
  private next: Record<Series, number> = { sap: 10_000, re: 1_000, eu: 2_000, inv: 10_000, plain: 500_000 };
  constructor(private readonly r: Rng) {}
  take(series: Series): string {
    const n = (this.next[series] += this.r.int(1, 3));
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

const HOME_SERIES: Record<string, Series[]> = {
  DE: ['sap', 're', 'plain'], AT: ['sap', 're'], CH: ['sap', 're'], FR: ['eu', 'sap'], NL: ['eu', 'sap'], BE: ['eu'], IT: ['eu'], ES: ['eu'], GB: ['inv', 'plain'], US: ['inv', 'plain'],
};

function currencyOf(r: Rng, country: string): Currency {
  if (country === 'US') return 'USD';
  if (country === 'GB') return r.chance(0.8) ? 'GBP' : 'EUR';
  if (country === 'CH') return r.chance(0.7) ? 'CHF' : 'EUR';
  return 'EUR';
}

/** a gross amount: net (log-uniform 40..40,000, sometimes round) × the VAT rate, rounded to cents */
function grossAmount(r: Rng, country: string): number {
  const net = r.chance(0.25) ? r.pick([50, 99, 120, 250, 480, 500, 750, 1000, 1250, 2000, 2500, 5000]) * 100 * r.int(1, 3) : Math.round(Math.exp(Math.log(40) + r.float() * Math.log(1000)) * 100);
  return Math.round(net * r.pick(VAT[country] ?? [1.19]));
}

function poNumber(r: Rng, style: number): string {
  switch (style) {
    case 0:
      return `45${r.digits(8)}`;
    case 1:
      return `PO-${r.int(10000, 99999)}`;
    default:
      return `BE2026${r.digits(5)}`;
  }
}

/**
 * Customers, and for each its open invoices (skewed: a few large accounts hold many), a few closed
 * invoices and, for some, an open credit memo. Document dates lie before `statementStart`.
 */
export function generateWorld(seed: number, size: WorldSize, statementStart: string): World {
  const r = new Rng(seed);
  const accounts: Account[] = [
    { key: 'EUR-MAIN', currency: 'EUR', iban: randomIban(r, 'DE') },
    { key: 'EUR-SAVINGS', currency: 'EUR', iban: randomIban(r, 'DE'), savings: true },
    { key: 'USD', currency: 'USD', iban: randomIban(r, 'DE') },
    { key: 'GBP', currency: 'GBP', iban: randomIban(r, 'GB') },
    { key: 'CHF', currency: 'CHF', iban: randomIban(r, 'CH') },
  ];
  const customers: Customer[] = [];
  const names = new Set<string>();
  const add = (name: string, country: string, twin: string | null): Customer => {
    const code = `C${10001 + customers.length}`;
    const us = country === 'US';
    const c: Customer = {
      code,
      name,
      country,
      currency: currencyOf(r, country),
      iban: us ? null : randomIban(r, country),
      account: us ? { account_number: r.digits(10), bank_code: `0${r.digits(8)}` } : null,
      otherIban: us ? null : randomIban(r, country),
      masterDataAccount: r.chance(0.5),
      twin,
      subscription: r.chance(0.1),
    };
    names.add(name);
    customers.push(c);
    return c;
  };
  // the pairs every clerk knows, then generated ones
  for (const [a, b] of [['Müller Logistik GmbH', 'Müller Logistik AG'], ['Nordwind Handels GmbH', 'Nordwind Handel GmbH']]) {
    const first = add(a!, 'DE', null);
    first.twin = add(b!, 'DE', first.code).code;
  }
  while (customers.length < size.customers) {
    const country = r.weighted(COUNTRY_WEIGHTS);
    const { name } = companyName(r, country);
    if (names.has(name)) continue;
    const c = add(name, country, null);
    if (customers.length < size.customers && r.chance(0.04)) {
      const twin = lookAlikeOf(r, name, country);
      if (!names.has(twin)) c.twin = add(twin, country, c.code).code;
    }
  }

  const numbering = new Numbering(r);
  // a PO number names one order: unique in the world, so that quoting it identifies the invoice
  const pos = new Set<string>();
  const uniquePo = (style: number): string => {
    for (;;) {
      const po = poNumber(r, style);
      if (!pos.has(po)) {
        pos.add(po);
        return po;
      }
    }
  };
  const documents: Doc[] = [];
  // open invoices per customer: weights u^3 (a few large accounts), at least one each
  const weights = customers.map(() => 0.05 + r.float() ** 3);
  const totalWeight = weights.reduce((s, w) => s + w, 0);
  const counts = weights.map((w) => Math.max(1, Math.round((w / totalWeight) * size.openInvoices)));
  customers.forEach((c, i) => {
    const home = HOME_SERIES[c.country] ?? ['sap'];
    const poStyle = r.int(0, 3);
    const doc = (amount: number, issued: string, terms: number, kind: Doc['kind'] = 'invoice'): Doc => {
      const series = r.chance(0.85) ? home[0]! : r.pick(home);
      const withDiscount = kind === 'invoice' && r.chance(0.25);
      // invoices with early-payment terms are mostly recent: the discount is still at stake in the month
      const documentDate = withDiscount && r.chance(0.6) ? addDays(statementStart, -r.int(1, 12)) : issued;
      const d: Doc = {
        number: numbering.take(series),
        series,
        customer: c.code,
        kind,
        currency: c.currency,
        amount,
        open: amount,
        statusOpen: true,
        reference: kind === 'invoice' && poStyle < 3 && r.chance(0.7) ? uniquePo(poStyle) : null,
        documentDate,
        netDueDate: addDays(documentDate, terms),
        discountTerms: [],
      };
      if (withDiscount) {
        d.discountTerms = r.chance(0.7) ? [{ due_date: addDays(documentDate, 10), percent: '2' }] : [{ due_date: addDays(documentDate, 8), percent: '3' }, { due_date: addDays(documentDate, 14), percent: '2' }];
      }
      documents.push(d);
      return d;
    };
    const terms = r.pick([14, 30, 30, 45, 60]);
    const subscriptionAmount = grossAmount(r, c.country);
    for (let k = 0; k < counts[i]!; k++) {
      const documentDate = addDays(statementStart, -r.int(3, 110));
      const d = doc(c.subscription && k < 4 ? subscriptionAmount : grossAmount(r, c.country), documentDate, terms);
      // the ERP reports some invoices partly paid already
      if (r.chance(0.03)) d.open = Math.round((d.amount * r.int(30, 90)) / 100);
    }
    for (let k = r.int(0, 3); k > 0; k--) {
      const d = doc(grossAmount(r, c.country), addDays(statementStart, -r.int(60, 300)), terms);
      d.open = 0;
      d.statusOpen = false;
    }
    if (r.chance(0.2)) doc(Math.round(grossAmount(r, c.country) * 0.3), addDays(statementStart, -r.int(5, 60)), 0, 'credit_memo');
  });
  // look-alikes share an amount (the same product at the same price), the trap of amount-only matching
  for (const c of customers) {
    if (!c.twin || c.code > c.twin) continue;
    const mine = documents.find((d) => d.customer === c.code && d.kind === 'invoice' && d.statusOpen && d.currency === customers.find((x) => x.code === c.twin)!.currency);
    const theirs = documents.find((d) => d.customer === c.twin && d.kind === 'invoice' && d.statusOpen && d.open === d.amount);
    if (mine && theirs && mine.open === mine.amount) {
      theirs.amount = mine.amount;
      theirs.open = mine.amount;
    }
  }
  return { seed, organizationName: 'Nordlicht Vertrieb GmbH', accounts, customers, documents };
}

/** The push records of a customer (spec 4.3.17 with the `bank_accounts` extension). */
export function customerPushRecord(c: Customer): Record<string, unknown> {
  const bank_accounts = c.masterDataAccount ? (c.iban ? [{ iban: c.iban }] : c.account ? [{ ...c.account }] : []) : [];
  return {
    customer_code: c.code,
    name1: c.name,
    name2: '',
    name3: '',
    street: 'Hauptstrasse',
    house_num1: '1',
    post_code1: '10115',
    city1: 'Berlin',
    country: c.country,
    company_code: '1000',
    search_term: c.name.split(' ')[0]!.toUpperCase().slice(0, 20),
    ...(bank_accounts.length ? { bank_accounts } : {}),
  };
}

/** The push record of a document (spec 4.3.16; `amount_open` and `discount_terms` extensions). */
export function documentPushRecord(d: Doc): Record<string, unknown> {
  return {
    document_number: d.number,
    company_code: { sap: '1000', re: '2000', eu: '3000', inv: '4000', plain: '5000' }[d.series],
    fiscal_year: '2026',
    customer_code: d.customer,
    currency: d.currency,
    debit_credit_indicator: d.kind === 'credit_memo' ? 'H' : 'S',
    document_type: d.kind === 'credit_memo' ? 'DG' : 'RV',
    reference: d.reference ?? '',
    text: d.kind === 'credit_memo' ? 'Gutschrift' : 'Lieferung',
    document_date: d.documentDate,
    net_due_date: d.netDueDate,
    posting_date: d.documentDate,
    clearing_date: d.statusOpen ? null : addDays(d.netDueDate, 3),
    amount_in_document_currency: fmtCents(d.amount),
    status_open: d.statusOpen,
    ...(d.statusOpen && d.open !== d.amount ? { amount_open: fmtCents(d.open) } : {}),
    ...(d.discountTerms.length ? { discount_terms: d.discountTerms } : {}),
  };
}
