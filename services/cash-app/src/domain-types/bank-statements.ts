/** Bank statement statuses and deposit match statuses, shared by the domain rules, the store and the API schema. */
import type { MatchStatus } from './matching.js';

/**
 * Statuses. `uploaded`: file stored, processing not started. `processing`: the bankStatement workflow
 * is storing, classifying and matching the transactions. `ready`: processed, payments proposed,
 * waiting for approval. `approved`: accepted by a user (cannot be deleted). `failed`: processing
 * failed after retries (`error` says why). `synced`: arrived through a bank connection.
 */
export const STATEMENT_STATUSES = ['uploaded', 'processing', 'ready', 'approved', 'synced', 'failed'] as const;
export type StatementStatus = (typeof STATEMENT_STATUSES)[number];

export const STATUS_DESCRIPTION =
  '`uploaded` (file stored, processing queued) → `processing` (workflow storing, classifying and matching ' +
  'transactions) → `ready` (payments proposed) → `approved` (accepted; can no longer be deleted). `failed`: ' +
  'processing failed after retries, `error` says why. `synced`: the statement arrived through a bank ' +
  'connection rather than an upload (only organization admins may delete it).';

/** A deposit's match statuses (bank_transactions.match_status), in the order a clerk works through them. */
export const MATCH_STATUSES = ['unmatched', 'proposed', 'approved', 'not_a_payment'] as const satisfies readonly MatchStatus[];

export const MATCH_STATUS_DESCRIPTION =
  'Extension of the spec. Where a deposit stands in cash application: `unmatched` (no payment: automatic matching found ' +
  'nothing it could propose, or a person has not allocated it yet), `proposed` (it has an unapproved payment, proposed by ' +
  'matching or created by a user), `approved` (its payment is approved), `not_a_payment` (no payment, and the credit is not ' +
  'a customer payment: `is_payment` false — a refund, interest, an own transfer, a card settlement — so matching never ' +
  'proposes one for it). Null for debits and zero amounts, which are not deposits. The database derives it from the ' +
  'payments and `is_payment` on every change (a proposal, a manual payment, an approval, an unposting that makes the ' +
  'payment unapproved again, a deletion), so it is never stale.';
