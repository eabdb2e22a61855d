/** Bank statement statuses, shared by the domain rules, the store and the API schema. */

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
