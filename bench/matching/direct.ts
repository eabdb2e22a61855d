/**
 * Direct mode: the pure matching engine over the benchmark's world in-process, without the stack,
 * for fast engine iteration. The context is what the platform gives the engine after the warm-up:
 * open invoices and credit memos (ids = document numbers) without the ones the warm-up paid, the
 * payers' accounts learned from the warm-up's approvals and those of the customer master data, and
 * the month's deposits that the statement's classification keeps as payments (own accounts = the
 * organization's accounts).
 */
import { classifyDeposit } from '../../services/cash-app/src/domain/bank-lines.js';
import { DEFAULT_MATCH_CONFIG, matchDeposits, type KnownAccount, type MatchContext, type MatchInvoice, type MatchTransaction, type Proposal } from '../../services/cash-app/src/domain/matching/index.js';
import type { Benchmark } from './benchmark.js';
import type { Line, ShortfallReason } from './lines.js';
import { fmtCents, toCents } from './random.js';
import type { Observed } from './score.js';

export const TOLERANCE_ADJUSTMENT_ID = 'short-pay-write-off';

export function directContext(b: Benchmark): MatchContext {
  const paidInWarmup = new Set(b.warmup.flatMap((l) => l.truth.allocations.map((a) => a.document)));
  const invoices: MatchInvoice[] = b.world.documents
    .filter((d) => d.statusOpen && d.open > 0 && !paidInWarmup.has(d.number))
    .map((d) => ({
      id: d.number,
      partner_id: d.customer,
      document_number: d.number,
      reference: d.reference,
      currency: d.currency,
      open_amount: fmtCents(d.open),
      net_due_date: d.netDueDate,
      kind: d.kind,
      document_date: d.documentDate,
      discount_terms: d.discountTerms,
    }));
  const learned = new Set(b.learned);
  const knownAccounts: KnownAccount[] = [];
  for (const c of b.world.customers) {
    const id = c.iban ?? c.account?.account_number;
    if (!id) continue;
    if (learned.has(c.code)) knownAccounts.push({ account_identifier: id, partner_id: c.code, source: 'learned' });
    else if (c.masterDataAccount) knownAccounts.push({ account_identifier: id, partner_id: c.code, source: 'master_data' });
  }
  return {
    invoices,
    partners: b.world.customers.map((c) => ({ id: c.code, name: c.name, legal_name: c.name })),
    knownAccounts,
    remittances: [],
    toleranceAdjustmentId: TOLERANCE_ADJUSTMENT_ID,
    config: DEFAULT_MATCH_CONFIG,
  };
}

export function matchTransaction(l: Line): MatchTransaction {
  return {
    id: l.id,
    amount: fmtCents(l.amount),
    currency: l.currency,
    counterparty_name: l.counterpartyName,
    counterparty_account: l.counterpartyAccount,
    counterparty_iban: l.counterpartyIban,
    remittance_information: l.remittance,
    bank_reference: l.id,
    end_to_end_id: l.endToEndId,
    transaction_code: l.transactionCode,
    booking_date: l.bookingDate,
    value_date: l.bookingDate,
  };
}

/** A proposal read as the scorer reads it; ids are mapped by `partnerCode` / `documentNumber`. */
export function observedOf(
  p: { partner_id: string | null; score: number | null; shortfall?: { amount: string; reason: ShortfallReason } | null; allocations: readonly { invoice_id: string; amount_paid: string; amount_discount: string; amount_withheld: string; adjustment_amount: string }[] },
  partnerCode: (id: string) => string | undefined,
  documentNumber: (id: string) => string | undefined,
): Observed {
  return {
    partner: p.partner_id === null ? null : (partnerCode(p.partner_id) ?? `?${p.partner_id}`),
    score: p.score,
    allocations: p.allocations.map((a) => ({
      document: documentNumber(a.invoice_id) ?? `?${a.invoice_id}`,
      paid: toCents(a.amount_paid),
      discount: toCents(a.amount_discount),
      withheld: toCents(a.amount_withheld),
      adjustment: toCents(a.adjustment_amount),
    })),
    ...(p.shortfall === undefined ? {} : { shortfall: p.shortfall === null ? null : { amount: toCents(p.shortfall.amount), reason: p.shortfall.reason } }),
  };
}

/** Run the engine over the month's statement; the proposals by line id. */
export function runDirect(b: Benchmark): Map<string, Observed> {
  const ctx = directContext(b);
  const own = new Set(b.world.accounts.map((a) => a.iban));
  const deposits = b.lines.filter(
    (l) =>
      classifyDeposit(
        { amount: fmtCents(l.amount), counterpartyName: l.counterpartyName, counterpartyAccount: l.counterpartyAccount, counterpartyIban: l.counterpartyIban, remittanceInformation: l.remittance, transactionCode: l.transactionCode },
        own,
      ).isPayment,
  );
  const { proposals } = matchDeposits(deposits.map(matchTransaction), ctx);
  const observed = new Map<string, Observed>();
  for (const p of proposals as Proposal[]) observed.set(p.transaction_id, observedOf(p, (id) => id, (id) => id));
  return observed;
}
