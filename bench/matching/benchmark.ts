/**
 * The labelled benchmark: a world, its warm-up statement (last month: clean payments a clerk
 * approves, so that payers' accounts are learned) and the month's statement (every customer-deposit
 * scenario and the credits that are not customer payments), each line with its truth.
 */
import { ACQUIRERS, SUPPLIERS } from './names.js';
import { quoting, languageOf } from './references.js';
import { allocationOf, bookingDay, CREDIT_TRANSFER, Pool, subsetCount, type Line } from './lines.js';
import { CUSTOMER_SCENARIOS } from './scenarios.js';
import { randomIban, Rng } from './random.js';
import { generateWorld, type Customer, type World } from './world.js';

export type BenchSize = 'small' | 'full';

export const SIZES: Record<BenchSize, { customers: number; openInvoices: number; deposits: number; nonCustomer: number; minPerScenario: number }> = {
  small: { customers: 48, openInvoices: 340, deposits: 60, nonCustomer: 10, minPerScenario: 2 },
  full: { customers: 500, openInvoices: 6300, deposits: 2000, nonCustomer: 120, minPerScenario: 10 },
};

export const DEFAULT_SEED = 20261126;
export const WARMUP = { start: '2026-10-01', end: '2026-10-30' };
export const MONTH = { start: '2026-11-02', end: '2026-11-27' };

export const NON_CUSTOMER_SCENARIOS = ['not_a_payment_supplier_refund', 'not_a_payment_interest', 'not_a_payment_own_transfer', 'not_a_payment_card_settlement'] as const;

export interface Benchmark {
  seed: number;
  size: BenchSize;
  world: World;
  warmup: Line[];
  lines: Line[];
  /** customers whose account the warm-up teaches (approved payments) */
  learned: string[];
}

const notAPayment = (scenario: string, variant: string | null) => ({ scenario, variant, partner: null, allocations: [], shortfall: null, notAPayment: true });

/**
 * A customer that is also a supplier pays back a double payment or a supplier bonus: from its known
 * account, under its own name, for an amount no combination of its open invoices makes.
 */
function customerAsSupplier(r: Rng, pool: Pool, learned: readonly string[]): { customer: Customer; amount: number } | null {
  for (let attempt = 0; attempt < 20; attempt++) {
    const customer = pool.customerByCode.get(r.pick(learned))!;
    if (customer.currency !== 'EUR' || !customer.iban) continue;
    const amount = r.int(5000, 250_000);
    const open = pool.openInvoices(customer.code, 'EUR').map((d) => d.open);
    if (open.length <= 16 && subsetCount(open, amount, 1) === 0) return { customer, amount };
  }
  return null;
}

function nonCustomerLine(r: Rng, world: World, pool: Pool, learned: readonly string[], scenario: (typeof NON_CUSTOMER_SCENARIOS)[number], start: string, end: string): Omit<Line, 'id'> {
  const base = { account: 'EUR-MAIN', currency: 'EUR' as const, bookingDate: bookingDay(r, start, end), endToEndId: null, transactionCode: CREDIT_TRANSFER };
  switch (scenario) {
    case 'not_a_payment_supplier_refund': {
      const both = r.chance(0.3) ? customerAsSupplier(r, pool, learned) : null;
      if (both) {
        const text = r.pick(['Rückzahlung Doppelzahlung', 'Rückvergütung Lieferantenbonus 2026', 'Gutschrift Ihre Lieferung', 'Repayment duplicate payment']);
        return { ...base, amount: both.amount, counterpartyName: both.customer.name, counterpartyIban: both.customer.iban, counterpartyAccount: both.customer.iban, remittance: text, truth: notAPayment(scenario, 'customer_as_supplier') };
      }
      const name = r.pick(SUPPLIERS);
      const keyword = r.chance(0.5);
      const text = keyword
        ? r.pick([`Erstattung Gutschrift GS-${r.int(10000, 99999)}`, `Refund overpayment CN ${r.int(2026, 2026)}/${r.int(1000, 9999)}`, 'Rückerstattung Kaution', `Erstattung Umsatzsteuer ${r.int(1, 10)}/2026`])
        : r.pick([`Gutschrift Bonus 2026 Kd-Nr ${r.int(70000, 79999)}`, `Bonusvergütung Q3 Lieferant ${r.int(1000, 9999)}`, `Credit note ${r.letters(2)}-${r.int(1000, 9999)} volume rebate`]);
      return { ...base, amount: r.int(2000, 300_000), counterpartyName: name, counterpartyIban: randomIban(r, 'DE'), counterpartyAccount: null, remittance: text, truth: notAPayment(scenario, keyword ? 'refund_wording' : 'no_refund_wording') };
    }
    case 'not_a_payment_interest': {
      const coded = r.chance(0.6);
      return {
        ...base,
        amount: r.int(100, 30_000),
        counterpartyName: coded ? null : 'Commerzbank AG',
        counterpartyIban: null,
        counterpartyAccount: null,
        remittance: r.pick(['Habenzinsen 01.10.2026 - 31.10.2026', 'Zinsgutschrift', 'ABSCHLUSS PER 31.10.2026', 'Credit interest October']),
        transactionCode: coded ? 'ACMT/MCOP/INTR' : CREDIT_TRANSFER,
        truth: notAPayment(scenario, coded ? 'interest_code' : 'text_only'),
      };
    }
    case 'not_a_payment_own_transfer': {
      const savings = world.accounts.find((a) => a.savings)!;
      return {
        ...base,
        amount: r.int(100, 1000) * 10_000,
        counterpartyName: world.organizationName,
        counterpartyIban: savings.iban,
        counterpartyAccount: savings.iban,
        remittance: r.pick(['Übertrag Tagesgeld', 'Umbuchung', 'Liquiditätsausgleich', null]),
        transactionCode: 'PMNT/RCDT/BOOK',
        truth: notAPayment(scenario, 'from_own_savings_account'),
      };
    }
    case 'not_a_payment_card_settlement': {
      const a = r.pick(ACQUIRERS);
      return { ...base, amount: r.int(50_000, 3_000_000), counterpartyName: a.name, counterpartyIban: randomIban(r, 'NL'), counterpartyAccount: null, remittance: a.text(r), transactionCode: a.code, truth: notAPayment(scenario, a.name.split(' ')[0]!.toLowerCase()) };
    }
  }
}

/**
 * Last month's statement: one clean payment from most customers (from their usual account), which the
 * clerk approves; and one interest credit on the savings account, so that the platform knows it as an
 * own account.
 */
function warmupLines(r: Rng, world: World): { lines: Omit<Line, 'id'>[]; learned: string[] } {
  const lines: Omit<Line, 'id'>[] = [];
  const learned: string[] = [];
  for (const c of world.customers) {
    if (!r.chance(0.6)) continue;
    const d = world.documents.find((x) => x.customer === c.code && x.kind === 'invoice' && x.statusOpen && x.open === x.amount && x.documentDate < WARMUP.end);
    if (!d) continue;
    learned.push(c.code);
    lines.push({
      account: d.currency === 'EUR' ? 'EUR-MAIN' : d.currency,
      currency: d.currency,
      amount: d.open,
      bookingDate: bookingDay(r, WARMUP.start, WARMUP.end),
      counterpartyName: c.name,
      counterpartyIban: c.iban,
      counterpartyAccount: c.iban ?? c.account?.account_number ?? null,
      remittance: quoting([d.number], r, languageOf(c.country)),
      endToEndId: null,
      transactionCode: CREDIT_TRANSFER,
      truth: { scenario: 'warmup', variant: null, partner: c.code, allocations: [allocationOf(d)], shortfall: null, notAPayment: false },
    });
  }
  lines.push({
    account: 'EUR-SAVINGS',
    currency: 'EUR',
    amount: r.int(1000, 20_000),
    bookingDate: WARMUP.end,
    counterpartyName: null,
    counterpartyIban: null,
    counterpartyAccount: null,
    remittance: 'Habenzinsen 3. Quartal',
    endToEndId: null,
    transactionCode: 'ACMT/MCOP/INTR',
    truth: notAPayment('warmup_interest', null),
  });
  return { lines, learned };
}

export function generateBenchmark(size: BenchSize, seed = DEFAULT_SEED): Benchmark {
  const s = SIZES[size];
  const world = generateWorld(seed, { customers: s.customers, openInvoices: s.openInvoices }, MONTH.start);
  const r = new Rng(seed ^ 0x5bd1e995);
  const warm = warmupLines(r, world);
  const relieved = new Set(warm.lines.flatMap((l) => l.truth.allocations.map((a) => a.document)));
  const pool = new Pool(world, relieved, new Set(warm.learned));
  const ctx = { r, pool, start: MONTH.start, end: MONTH.end, learned: new Set(warm.learned) };
  const totalWeight = CUSTOMER_SCENARIOS.reduce((t, x) => t + x.weight, 0);
  const month: Omit<Line, 'id'>[] = [];
  for (const scenario of CUSTOMER_SCENARIOS) {
    const quota = Math.max(s.minPerScenario, Math.round((scenario.weight / totalWeight) * s.deposits));
    let made = 0;
    for (let attempt = 0; made < quota && attempt < quota * 5; attempt++) {
      const l = scenario.build(ctx);
      if (!l) continue;
      month.push(l);
      made++;
    }
  }
  NON_CUSTOMER_SCENARIOS.forEach((scenario, i) => {
    const quota = Math.max(2, Math.round(s.nonCustomer * [0.35, 0.15, 0.2, 0.3][i]!));
    for (let k = 0; k < quota; k++) month.push(nonCustomerLine(r, world, pool, warm.learned, scenario, MONTH.start, MONTH.end));
  });
  r.shuffle(month);
  const byDate = (a: Omit<Line, 'id'>, b: Omit<Line, 'id'>) => a.bookingDate.localeCompare(b.bookingDate);
  return {
    seed,
    size,
    world,
    warmup: [...warm.lines].sort(byDate).map((l, i) => ({ ...l, id: `W${seed}-${String(i + 1).padStart(5, '0')}` })),
    lines: month.sort(byDate).map((l, i) => ({ ...l, id: `M${seed}-${String(i + 1).padStart(5, '0')}` })),
    learned: warm.learned,
  };
}
