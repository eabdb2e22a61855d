/**
 * In-process timing of the matching engine (no database, no services): `matchStatement` over a
 * generated world of 100,000 deposits against 200,000 open invoices of 20,000 customers, the shape
 * of the API's large-statement benchmark (bench/cash-app/large-statement.ts) with the matching
 * scenarios that reach the slower paths: numbers as written, numbers with a bank charge, payer by
 * known account with the exact amount, with a charge, or a combination, and credits without evidence.
 *
 *   npx tsx bench/matching/timing.ts [engine-module …]
 *
 * Each engine module (a path to a copy of services/cash-app/src/domain/matching/index.ts, say an
 * older one checked out beside it) is timed in the same process, in turn, three rounds each, so two
 * engines compare under the same load; without arguments, the current engine. Prints CPU and wall
 * time per round and the outcomes' counts (two engines should agree but for what changed).
 */
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { KnownAccount, MatchInvoice, MatchOutcome, MatchPartner, MatchTransaction } from '../../services/cash-app/src/domain-types/matching.js';
import type { MatchContext, MatchState } from '../../services/cash-app/src/domain/matching/index.js';
import { fmtCents, Rng } from './random.js';

const DEPOSITS = Number(process.env.TIMING_DEPOSITS ?? 100_000);
const INVOICES = Number(process.env.TIMING_INVOICES ?? 200_000);
const CUSTOMERS = Math.max(1, Math.round(INVOICES / 10));
const ROUNDS = 3;

interface Engine {
  matchStatement(txs: readonly MatchTransaction[], ctx: MatchContext, state?: MatchState): MatchOutcome[];
  MatchState: new (invoices: readonly MatchInvoice[]) => MatchState;
  DEFAULT_MATCH_CONFIG: MatchContext['config'];
}

function world(): { ctx: Omit<MatchContext, 'config'>; txs: MatchTransaction[] } {
  const r = new Rng(20261126);
  const partners: MatchPartner[] = [];
  const knownAccounts: KnownAccount[] = [];
  for (let c = 1; c <= CUSTOMERS; c++) {
    partners.push({ id: `P${c}`, name: `Large Payer ${c} GmbH`, legal_name: null });
    if (c % 2 === 0) knownAccounts.push({ account_identifier: `DE${String(c).padStart(20, '0')}`, partner_id: `P${c}` });
  }
  const invoices: MatchInvoice[] = [];
  for (let g = 1; g <= INVOICES; g++) {
    invoices.push({
      id: `I${g}`,
      partner_id: `P${1 + (g % CUSTOMERS)}`,
      document_number: String(8_100_000 + g),
      reference: `INV-${8_100_000 + g}`,
      currency: 'EUR',
      open_amount: fmtCents(r.int(5_000, 995_000)),
      net_due_date: `2026-${String(1 + (g % 10)).padStart(2, '0')}-15`,
    });
  }
  const txs: MatchTransaction[] = [];
  for (let i = 0; i < DEPOSITS; i++) {
    const inv = invoices[i % INVOICES]!;
    const partner = Number(inv.partner_id!.slice(1));
    const cents = Math.round(Number(inv.open_amount) * 100);
    const known = partner % 2 === 0 ? `DE${String(partner).padStart(20, '0')}` : null;
    const kind = i % 20;
    const base: MatchTransaction = {
      id: `T${i}`,
      amount: inv.open_amount,
      currency: 'EUR',
      counterparty_name: `LARGE PAYER ${partner} GMBH`,
      counterparty_account: null,
      counterparty_iban: known,
      remittance_information: `Invoice ${inv.document_number}`,
      bank_reference: null,
      end_to_end_id: null,
      booking_date: '2026-11-20',
    };
    if (kind === 0) txs.push({ ...base, amount: fmtCents(cents - r.int(500, 3500)) }); // number with a bank charge
    else if (kind === 1 && known) txs.push({ ...base, remittance_information: 'Zahlung' }); // payer by account, exact amount
    else if (kind === 2 && known) txs.push({ ...base, amount: fmtCents(cents - r.int(500, 3500)), remittance_information: 'Zahlung' }); // payer by account, charge
    else if (kind === 3) txs.push({ ...base, amount: fmtCents(r.int(100, 99_999)), counterparty_name: 'Stadtwerke Nirgendwo', counterparty_iban: null, remittance_information: 'Gutschrift' }); // no evidence
    else txs.push(base);
  }
  return { ctx: { invoices, partners, knownAccounts, remittances: [], toleranceAdjustmentId: 'adj', ownAccounts: [] }, txs };
}

async function main(): Promise<void> {
  const modules = process.argv.slice(2);
  const paths = modules.length > 0 ? modules : ['services/cash-app/src/domain/matching/index.ts'];
  const engines: { path: string; engine: Engine }[] = [];
  for (const p of paths) engines.push({ path: p, engine: (await import(pathToFileURL(resolve(p)).href)) as Engine });
  const started = Date.now();
  const { ctx, txs } = world();
  console.log(`world: ${txs.length} deposits, ${ctx.invoices.length} invoices, ${ctx.partners.length} customers (${Date.now() - started} ms)`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const { path, engine } of engines) {
      const full: MatchContext = { ...ctx, config: engine.DEFAULT_MATCH_CONFIG };
      const cpu = process.cpuUsage();
      const wall = Date.now();
      const outcomes = engine.matchStatement(txs, full, new engine.MatchState(full.invoices));
      const used = process.cpuUsage(cpu);
      const counts: Record<string, number> = {};
      for (const o of outcomes) counts[o.outcome] = (counts[o.outcome] ?? 0) + 1;
      const fees = outcomes.filter((o) => o.outcome === 'proposed' && o.proposal.shortfall?.reason === 'fee').length;
      console.log(`round ${round} ${path}: ${((used.user + used.system) / 1e6).toFixed(1)} s CPU, ${((Date.now() - wall) / 1000).toFixed(1)} s wall; ${JSON.stringify(counts)}, fees ${fees}`);
    }
  }
}

await main();
