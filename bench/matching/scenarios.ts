/**
 * The customer-deposit scenarios of the matching benchmark: how one line of the month's statement
 * pays (clean or noisy reference, batch, payer only, short pay, partial, overpayment, net of a credit
 * memo, foreign currency, look-alikes) and its truth. Each builder returns null when the world has no
 * fitting customer or invoice left; the caller tries again.
 */
import { payerName, type NameForm } from './names.js';
import { languageOf, noisy, quotedNumber, quoting, writtenAmount, writtenDate, type Noise, NOISE_SERIES } from './references.js';
import { accountFor, allocationOf, bookingDay, CREDIT_TRANSFER, endToEnd, normalizeKey, subsetCount, type Line, type Pool, type Truth } from './lines.js';
import { addDays, type Currency, type Customer, type Doc } from './world.js';
import { randomIban, type Rng } from './random.js';

export interface ScenarioContext {
  r: Rng;
  pool: Pool;
  start: string;
  end: string;
  /** customers whose paying account the platform knows: learned from an approved warm-up payment */
  learned: ReadonlySet<string>;
}

type Builder = (ctx: ScenarioContext) => Omit<Line, 'id'> | null;

interface PayerOpts {
  /** which account the payer pays from: its usual one, or one the platform has never seen */
  account?: 'primary' | 'other';
  nameForm?: NameForm;
  /** someone else pays for the customer (a central settlement office, a group treasury): no payer evidence */
  thirdParty?: boolean;
}

/**
 * Who pays on a customer's behalf: German central settlement offices (Zentralregulierer) for retail
 * groups, group treasuries, shared service centres. Their names resemble no customer.
 */
const THIRD_PARTIES = ['ZR Zentralregulierung Nord eG', 'Intercompany Treasury Services B.V.', 'Konzernfinanzen Service GmbH', 'Shared Service Center Finance Sp. z o.o.', 'Einkaufsverbund Süd Zentralregulierung'];

/** A third-party payer for a share of the lines: the line must then be matched on its reference alone. */
const thirdParty = (r: Rng, share: number): boolean => r.chance(share);

function defaultNameForm(r: Rng): NameForm {
  return r.weighted<NameForm>([['as_registered', 50], ['upper_transliterated', 35], ['truncated', 10], ['without_legal_form', 5]]);
}

function line(ctx: ScenarioContext, c: Customer, currency: Currency, amount: number, remittance: string | null, truth: Truth, opts: PayerOpts = {}): Omit<Line, 'id'> {
  const { r } = ctx;
  const other = opts.account === 'other' && c.otherIban;
  const iban = opts.thirdParty ? randomIban(r, 'DE') : other ? c.otherIban : c.iban;
  const bookingDate = bookingDay(r, ctx.start, ctx.end);
  return {
    account: accountFor(currency),
    currency,
    amount,
    bookingDate,
    counterpartyName: opts.thirdParty ? r.pick(THIRD_PARTIES) : payerName(c.name, opts.nameForm ?? defaultNameForm(r), r),
    counterpartyIban: iban,
    counterpartyAccount: iban ? iban : (c.account?.account_number ?? null),
    remittance,
    endToEndId: endToEnd(r),
    transactionCode: CREDIT_TRANSFER,
    truth,
  };
}

const truthOf = (scenario: string, variant: string | null, c: Customer, docs: Doc[], parts: Partial<Truth> = {}): Truth => ({
  scenario,
  variant,
  partner: c.code,
  allocations: docs.map((d) => allocationOf(d)),
  shortfall: null,
  notAPayment: false,
  ...parts,
});

/**
 * A customer (optionally filtered) with at least `n` free invoices in one currency, and those
 * invoices: whole ones (nothing paid yet), or with `balances` also invoices the ERP reports partly
 * paid (the line pays the rest).
 */
function payerWith(
  ctx: ScenarioContext,
  n: number,
  filter: (c: Customer) => boolean = () => true,
  docFilter: (d: Doc) => boolean = () => true,
  balances = false,
): { c: Customer; docs: Doc[] } | null {
  const { r, pool } = ctx;
  for (let attempt = 0; attempt < 40; attempt++) {
    const c = r.pick(pool.customers);
    if (!filter(c)) continue;
    const docs = r.shuffle(pool.free(c.code, { whole: !balances }).filter(docFilter));
    if (docs.length < n) continue;
    const currency = docs[0]!.currency;
    const same = docs.filter((d) => d.currency === currency).slice(0, n);
    if (same.length === n) return { c, docs: same };
  }
  return null;
}

const sum = (docs: Doc[]) => docs.reduce((s, d) => s + d.open, 0);

function cleanReference(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, 1, (c) => c.currency === 'EUR', () => true, true);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const quoted = quotedNumber(d, ctx.r);
  const text = quoting([quoted], ctx.r, languageOf(p.c.country)) + (ctx.r.chance(0.2) ? ` Kd-Nr ${p.c.code}` : '');
  const tp = thirdParty(ctx.r, 0.1);
  const variant = `${quoted === d.number ? 'invoice_number' : 'po_number'}${tp ? '_third_party' : ''}`;
  return line(ctx, p.c, d.currency, d.open, text, truthOf('clean_reference', variant, p.c, [d]), { thirdParty: tp });
}

function noisyReference(noise: Noise): Builder {
  return (ctx) => {
    const p = payerWith(ctx, 1, () => true, (d) => NOISE_SERIES[noise].includes(d.series));
    if (!p) return null;
    const d = p.docs[0]!;
    const written = noisy(d.number, noise, ctx.r);
    if (!written || (noise === 'typo' && ctx.pool.knownKeys.has(normalizeKey(written)))) return null;
    ctx.pool.take([d]);
    // a typo leaves the payer as the only other evidence: it is never paid by a third party
    const tp = noise !== 'typo' && thirdParty(ctx.r, 0.35);
    return line(ctx, p.c, d.currency, d.open, quoting([written], ctx.r, languageOf(p.c.country)), truthOf(`noisy_${noise}`, `${d.series}${tp ? '_third_party' : ''}`, p.c, [d]), { thirdParty: tp });
  };
}

function endToEndOnly(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, 1);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const tp = thirdParty(ctx.r, 0.35);
  const l = line(ctx, p.c, d.currency, d.open, ctx.r.pick([null, 'Zahlung', 'Payment', 'SEPA-Ueberweisung', 'Virement']), truthOf('noisy_end_to_end_only', `${d.series}${tp ? '_third_party' : ''}`, p.c, [d]), { thirdParty: tp });
  return { ...l, endToEndId: ctx.r.chance(0.5) ? d.number : d.number.replace(/[-/]/g, '') };
}

function besideCurrency(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, 1, () => true, (d) => d.series === 'plain' || d.series === 'sap' || d.series === 'inv');
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const lang = languageOf(p.c.country);
  const word = lang === 'de' ? 'Rechnung' : lang === 'fr' ? 'Facture' : 'Invoice';
  const text = `${word} ${d.number} ${d.currency} ${writtenAmount(d.open, lang, ctx.r)}`;
  const tp = thirdParty(ctx.r, 0.35);
  return line(ctx, p.c, d.currency, d.open, text, truthOf('noisy_beside_currency', `${d.series}${tp ? '_third_party' : ''}`, p.c, [d]), { thirdParty: tp });
}

function besideDate(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, 1);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const date = writtenDate(d.documentDate, ctx.r);
  const text = ctx.r.pick([`${d.number} vom ${date}`, `Inv ${d.number} dated ${date}`, `${date} ${d.number}`, `RG ${d.number} ${date}`]);
  const tp = thirdParty(ctx.r, 0.35);
  return line(ctx, p.c, d.currency, d.open, text, truthOf('noisy_beside_date', `${d.series}${tp ? '_third_party' : ''}`, p.c, [d]), { thirdParty: tp });
}

function batchWithNumbers(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, ctx.r.int(2, 6));
  if (!p) return null;
  const docs = ctx.pool.take(p.docs);
  const written = docs.map((d) => (ctx.r.chance(0.15) ? (noisy(d.number, 'zeros_dropped', ctx.r) ?? d.number) : d.number));
  const tp = thirdParty(ctx.r, 0.15);
  const variant = `${docs.length}_invoices${tp ? '_third_party' : ''}`;
  return line(ctx, p.c, docs[0]!.currency, sum(docs), quoting(written, ctx.r, languageOf(p.c.country)), truthOf('batch_with_numbers', variant, p.c, docs), { thirdParty: tp });
}

/** Invoices of a payer whose sum no other subset of the payer's open invoices has (and the payer's account is known). */
function uniqueSubset(ctx: ScenarioContext, n: number, filter: (c: Customer) => boolean): { c: Customer; docs: Doc[] } | null {
  for (let attempt = 0; attempt < 30; attempt++) {
    const p = payerWith(ctx, n, filter);
    if (!p) return null;
    const all = ctx.pool.openInvoices(p.c.code, p.docs[0]!.currency);
    if (all.length > 16) continue;
    if (subsetCount(all.map((d) => d.open), sum(p.docs)) === 1) return p;
  }
  return null;
}

const knownPayer = (ctx: ScenarioContext) => (c: Customer) => ctx.learned.has(c.code) || c.masterDataAccount;
const knownBy = (ctx: ScenarioContext, c: Customer) => (ctx.learned.has(c.code) ? 'learned_account' : 'master_data_account');

function batchWithoutNumbers(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = uniqueSubset(ctx, ctx.r.int(2, 4), knownPayer(ctx));
  if (!p) return null;
  const docs = ctx.pool.take(p.docs);
  const text = ctx.r.pick(['Sammelzahlung', 'Zahlung lt. Avis', 'Payment run', 'Zahlungsavis folgt', 'Règlement']);
  return line(ctx, p.c, docs[0]!.currency, sum(docs), text, truthOf('batch_without_numbers', knownBy(ctx, p.c), p.c, docs), { account: 'primary' });
}

const GENERIC = ['Zahlung', 'Payment', 'Ueberweisung', 'Zahlung Oktober', 'Virement', 'Thank you', null];

function payerOnly(scenario: string, form: 'name_variant' | 'truncated' | 'known_account'): Builder {
  return (ctx) => {
    const filter = form === 'known_account' ? knownPayer(ctx) : (c: Customer) => !c.twin && !!c.otherIban;
    const p = uniqueSubset(ctx, 1, filter);
    if (!p) return null;
    const d = ctx.pool.take(p.docs)[0]!;
    const nameForm: NameForm = form === 'truncated' ? 'truncated' : form === 'name_variant' ? ctx.r.pick<NameForm>(['as_registered', 'upper_transliterated', 'without_legal_form']) : 'upper_transliterated';
    const variant = form === 'known_account' ? knownBy(ctx, p.c) : nameForm;
    return line(ctx, p.c, d.currency, d.open, ctx.r.pick(GENERIC), truthOf(scenario, variant, p.c, [d]), { account: form === 'known_account' ? 'primary' : 'other', nameForm });
  };
}

function shortPay(reason: 'fee' | 'deduction' | 'partial'): Builder {
  return (ctx) => {
    const p = payerWith(ctx, 1, () => true, (d) => d.open >= 20_000);
    if (!p) return null;
    const d = ctx.pool.take(p.docs)[0]!;
    const lang = languageOf(p.c.country);
    let amount: number;
    let text = quoting([quotedNumber(d, ctx.r, 0.1)], ctx.r, lang);
    if (reason === 'fee') {
      amount = d.open - ctx.r.int(500, 3500);
    } else if (reason === 'deduction') {
      const cut = ctx.r.chance(0.5) ? ctx.r.int(40, 400) * 100 : ctx.r.int(4000, 40_000);
      if (cut * 3 > d.open) return null;
      amount = d.open - cut;
      if (ctx.r.chance(0.5)) text += ctx.r.pick([` abzgl. ${writtenAmount(cut, 'de', ctx.r)} Transportschaden`, ` less ${writtenAmount(cut, 'en', ctx.r)} damaged goods`, ` minus Reklamation`, ' Abzug Preisdifferenz']);
    } else {
      const share = Math.floor((d.open * ctx.r.pick([0.25, 1 / 3, 0.5])) / 1000) * 1000;
      if (share <= 0) return null;
      amount = share;
      text = `${ctx.r.pick(['Teilzahlung', '1. Rate', 'partial payment', 'Acompte'])} ${text}`;
    }
    const shortfall = d.open - amount;
    const alloc = reason === 'fee' ? { paid: amount, adjustment: shortfall } : reason === 'deduction' ? { paid: amount, withheld: shortfall } : { paid: amount };
    const truth = truthOf(reason === 'partial' ? 'partial_payment' : `short_pay_${reason}`, null, p.c, [d], { allocations: [allocationOf(d, alloc)], shortfall: { amount: shortfall, reason } });
    return line(ctx, p.c, d.currency, amount, text, truth);
  };
}

function discount(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  // paid within a discount period of the invoice's terms, on a day of the statement's month
  const windowOf = (d: Doc) => {
    const from = [ctx.start, addDays(d.documentDate, 1)].sort().at(-1)!;
    const to = [ctx.end, d.discountTerms.at(-1)!.due_date].sort()[0]!;
    return from <= to ? { from, to } : null;
  };
  const p = payerWith(ctx, 1, () => true, (d) => d.discountTerms.length > 0 && windowOf(d) !== null);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const w = windowOf(d)!;
  const span = Math.round((Date.parse(w.to) - Date.parse(w.from)) / 86_400_000);
  const bookingDate = addDays(w.from, ctx.r.int(0, span));
  const term = d.discountTerms.find((t) => t.due_date >= bookingDate)!;
  const cut = Math.round((d.open * Number(term.percent)) / 100);
  let text = quoting([d.number], ctx.r, languageOf(p.c.country));
  if (ctx.r.chance(0.4)) text += ` abzgl. ${term.percent}% Skonto`;
  const truth = truthOf('short_pay_discount', `${term.percent}_percent`, p.c, [d], { allocations: [allocationOf(d, { paid: d.open - cut, discount: cut })], shortfall: { amount: cut, reason: 'discount' } });
  return { ...line(ctx, p.c, d.currency, d.open - cut, text, truth), bookingDate };
}

function overpayment(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, 1);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  const extra = ctx.r.chance(0.5) ? ctx.r.int(1, 150) * 100 : ctx.r.int(100, 5000);
  return line(ctx, p.c, d.currency, d.open + extra, quoting([d.number], ctx.r, languageOf(p.c.country)), truthOf('overpayment', null, p.c, [d]));
}

function creditMemoNet(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  for (let attempt = 0; attempt < 40; attempt++) {
    const c = ctx.r.pick(ctx.pool.customers);
    const memo = ctx.pool.free(c.code, { kind: 'credit_memo' })[0];
    if (!memo) continue;
    const inv = ctx.pool.free(c.code, { currency: memo.currency, whole: true }).find((d) => d.open > memo.open);
    if (!inv) continue;
    ctx.pool.take([memo, inv]);
    const both = ctx.r.chance(0.6);
    const text = both ? ctx.r.pick([`${inv.number} abzgl. Gutschrift ${memo.number}`, `Invoice ${inv.number} less credit note ${memo.number}`, `${inv.number} ./. GS ${memo.number}`]) : quoting([inv.number], ctx.r, languageOf(c.country));
    return line(ctx, c, inv.currency, inv.open - memo.open, text, truthOf('credit_memo_net', both ? 'both_numbers' : 'invoice_number_only', c, [inv, memo]));
  }
  return null;
}

function foreignCurrency(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const p = payerWith(ctx, ctx.r.chance(0.8) ? 1 : 2, (c) => c.currency !== 'EUR', (d) => d.currency !== 'EUR');
  if (!p) return null;
  const docs = ctx.pool.take(p.docs);
  const written = docs.map((d) => (ctx.r.chance(0.3) ? (noisy(d.number, 'prefix_dropped', ctx.r) ?? d.number) : d.number));
  return line(ctx, p.c, docs[0]!.currency, sum(docs), quoting(written, ctx.r, 'en'), truthOf('foreign_currency', docs[0]!.currency, p.c, docs));
}

function lookAlike(ctx: ScenarioContext): Omit<Line, 'id'> | null {
  const byAccount = ctx.r.chance(0.5);
  if (byAccount) {
    const p = uniqueSubset(ctx, 1, (c) => !!c.twin && ctx.learned.has(c.code));
    if (!p) return null;
    const d = ctx.pool.take(p.docs)[0]!;
    return line(ctx, p.c, d.currency, d.open, ctx.r.pick(GENERIC), truthOf('look_alike', 'known_account', p.c, [d]), { account: 'primary', nameForm: 'upper_transliterated' });
  }
  const p = payerWith(ctx, 1, (c) => !!c.twin);
  if (!p) return null;
  const d = ctx.pool.take(p.docs)[0]!;
  return line(ctx, p.c, d.currency, d.open, quoting([d.number], ctx.r, languageOf(p.c.country)), truthOf('look_alike', 'invoice_number', p.c, [d]), { account: 'other', nameForm: 'truncated' });
}

/** Customer-deposit scenarios: builder, share of the month's deposits, minimum count at any size. */
export const CUSTOMER_SCENARIOS: { name: string; weight: number; build: Builder }[] = [
  { name: 'clean_reference', weight: 30, build: cleanReference },
  { name: 'noisy_prefix_dropped', weight: 3, build: noisyReference('prefix_dropped') },
  { name: 'noisy_glued', weight: 3, build: noisyReference('glued') },
  { name: 'noisy_zeros_dropped', weight: 3, build: noisyReference('zeros_dropped') },
  { name: 'noisy_separators', weight: 3, build: noisyReference('separators') },
  { name: 'noisy_typo', weight: 2, build: noisyReference('typo') },
  { name: 'noisy_end_to_end_only', weight: 2, build: endToEndOnly },
  { name: 'noisy_beside_currency', weight: 2, build: besideCurrency },
  { name: 'noisy_beside_date', weight: 2, build: besideDate },
  { name: 'batch_with_numbers', weight: 8, build: batchWithNumbers },
  { name: 'batch_without_numbers', weight: 3, build: batchWithoutNumbers },
  { name: 'payer_name_variant', weight: 3, build: payerOnly('payer_name_variant', 'name_variant') },
  { name: 'payer_truncated_name', weight: 2, build: payerOnly('payer_truncated_name', 'truncated') },
  { name: 'payer_known_account', weight: 4, build: payerOnly('payer_known_account', 'known_account') },
  { name: 'short_pay_fee', weight: 3, build: shortPay('fee') },
  { name: 'short_pay_discount', weight: 4, build: discount },
  { name: 'short_pay_deduction', weight: 3, build: shortPay('deduction') },
  { name: 'partial_payment', weight: 3, build: shortPay('partial') },
  { name: 'overpayment', weight: 2, build: overpayment },
  { name: 'credit_memo_net', weight: 3, build: creditMemoNet },
  { name: 'foreign_currency', weight: 6, build: foreignCurrency },
  { name: 'look_alike', weight: 4, build: lookAlike },
];
