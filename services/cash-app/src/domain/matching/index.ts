/**
 * Automatic matching of bank deposits to open invoices and credit memos (pure: no I/O, deterministic).
 *
 * Modules: tokens (document-number spellings), payers (who paid), classify (credits that are not
 * customer payments), amounts (allocations, tolerance, discounts, subset sums), fit (amount fits
 * and shortfalls), candidates (one deposit's evidence), assignment (the whole statement), state.
 *
 * Outcome per deposit (MatchOutcome): `proposed`, `not_a_payment` (own-account transfer, interest,
 * card settlement or payment processor without a customer reference that checks out), or
 * `unmatched` with the reasons (`ambiguous` with the candidates when equally good answers exist:
 * the engine never picks one of several equal invoices, combinations or twins).
 *
 * Score = sum of the evidence, capped at 1:
 *   remittance by transaction number or sent for the deposit 0.6 (by amount and payer 0.4) · invoice number as written 0.5,
 *   in a looser spelling (zero-dropped, prefix dropped or glued, other separators) 0.45, a one-digit
 *   typo 0.3 (only with the exact amount and never against the payer) · payer by known account 0.3,
 *   by name 0.25 × similarity (a legal-form twin told apart by its amounts 0.15 × similarity) ·
 *   amount exact 0.3, combination / early-payment discount 0.25, net of a credit memo 0.2, fee within
 *   tolerance 0.15, a bank charge above the tolerance (up to the fee ceiling) 0.05, deduction 0.05,
 *   partial or overpayment 0 · a payer who is not the documents'
 *   partner takes off what an agreeing payer adds; the payer's own invoice chosen over another
 *   customer's number −0.1.
 * Bands: ≥ 0.9 — a remittance by its number with the exact amount, or an invoice number (any
 * spelling but a typo) with the exact amount (or its discount or combination) and an agreeing payer:
 * meant for automatic approval (100 % right on the labelled benchmark, bench/matching); 0.5–0.9 — one strong piece of evidence with the amount
 * (number alone, known account + exact amount, name + exact amount; a bank charge above the
 * write-off tolerance even with a number and a known payer: the tolerance is what the organization
 * accepts to write off unattended, a bigger charge is proposed for a person to confirm); < 0.5 —
 * needs a look (shortfalls without a number, payer conflicts, twins, typos without a payer).
 */
export type {
  KnownAccount,
  MatchInvoice,
  MatchOutcome,
  MatchPartner,
  MatchReason,
  MatchRemittance,
  MatchTransaction,
  Proposal,
  ProposedAllocation,
  Shortfall,
} from '../../domain-types/matching.js';
export { DEFAULT_MATCH_CONFIG, type MatchConfig, type MatchContext } from './config.js';
export { extractTokens, normalizeKey, documentKeys, variantKeys, stripAmountsAndDates, transactionTokens, oneDigitTypo } from './tokens.js';
export { identifyPayer, payerCandidates, legalForms, normalizeAccount, nameSimilarity, nameTokens, PartnerIndex, type PayerMatch } from './payers.js';
export { allocationsFitMinorUnits, findSubsetSum, discountFor } from './amounts.js';
export { nonCustomerSignal } from './classify.js';
export { speaksOfDeduction } from './fit.js';
export { MatchState } from './state.js';
export { matchDeposit, matchDeposits, matchStatement, matchStatementPaced } from './assignment.js';
