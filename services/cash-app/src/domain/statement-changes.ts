/**
 * What happens to a stored statement: approval (with the acknowledgement of a balance mismatch) and
 * deletion, which first stops its processing workflow.
 */
import type { Logger } from 'pino';
import { WorkflowNotFoundError } from '@temporalio/client';
import { ConflictError, ForbiddenError, NotFoundError, type BusinessUnitScope } from '@rp/platform';
import { bankStatementWorkflowId } from '@rp/workflows';
import type { CashAppDeps } from '../deps.js';
import type { StatementStatus } from '../domain-types/bank-statements.js';
import {
  countApprovedPayments,
  countPaymentsOutOfScope,
  deleteStatement,
  getStatement,
  lockStatementForApproval,
  lockStatementForDelete,
  markApproved,
  type StatementRow,
} from '../store/bank-statements.js';
import { recordStatementEvent } from './events.js';
import { money } from './statement-money.js';
import { statementOf } from './statement-reads.js';

/** How long a DELETE waits for a cancelled processing workflow to close before terminating it. */
const CANCEL_WAIT_MS = 20_000;

/** Cancels the statement's processing workflow if it runs, and waits (bounded) until it has closed. */
async function stopProcessing(deps: Pick<CashAppDeps, 'temporal'>, workflowId: string, log?: Logger): Promise<void> {
  const handle = deps.temporal.workflow.getHandle(workflowId);
  try {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return;
    await handle.cancel();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return;
    throw err;
  }
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    handle.result().then(
      () => true,
      () => true, // CancelledFailure (expected) or any other ending: the workflow is closed
    ),
    new Promise<false>((r) => (timer = setTimeout(() => r(false), CANCEL_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!closed) {
    log?.warn({ workflow_id: workflowId }, 'statement workflow did not close after cancellation; terminating it');
    await handle.terminate('bank statement deleted').catch((err: unknown) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    });
  }
}

/**
 * Deletes a statement with its transactions and their (unapproved) payments. Refused (409) when the
 * statement or one of its payments is approved; `synced` statements need an admin. A running
 * processing workflow is cancelled and awaited first. The final check and the delete run under the
 * organization's payment lock, the lock a payment approval holds: an approval racing the delete
 * either commits first (the delete then sees it and refuses) or waits and finds the payment gone
 * (404) — an approved payment is never removed by the cascade.
 */
export async function deleteUploadedStatement(
  deps: Pick<CashAppDeps, 'db' | 'temporal'> & { storage?: CashAppDeps['storage'] },
  who: { organizationId: string; role: string | null; scope?: BusinessUnitScope },
  statementId: string,
  log?: Logger,
): Promise<void> {
  const org = who.organizationId;
  const row = await statementOf(deps, org, statementId);
  const refuse = async (db: Parameters<typeof countApprovedPayments>[0], status: StatementStatus) => {
    if (status === 'approved') throw new ConflictError('An approved bank statement cannot be deleted.');
    if ((await countApprovedPayments(db, org, row.id)) > 0) throw new ConflictError('The statement has approved payments; it cannot be deleted.');
    // a member may not remove payments of business units they may not access
    if ((await countPaymentsOutOfScope(db, org, row.id, who.scope ?? '*')) > 0) {
      throw new ConflictError('The statement has payments of business units you may not access; an organization admin may delete it.');
    }
  };
  if (row.status === 'synced' && who.role !== 'admin') throw new ForbiddenError('Only organization admins may delete a statement synced from a bank connection.');
  await refuse(deps.db, row.status);
  await stopProcessing(deps, row.workflow_id ?? bankStatementWorkflowId(row.id), log);
  const { fileObjectKey } = await deps.db.transaction(async (trx) => {
    const now = await lockStatementForDelete(trx, org, row.id);
    if (!now) throw new NotFoundError(`No bank statement ${statementId}.`);
    await refuse(trx, now.status);
    return deleteStatement(trx, org, row.id);
  });
  // the file went with its last statement: its object too, once that committed (a failure leaves an unreferenced object, not an error)
  if (fileObjectKey && deps.storage) await deps.storage.deleteObject(fileObjectKey).catch((err: unknown) => log?.warn({ err, object_key: fileObjectKey }, 'could not remove a deleted statement file'));
}

/**
 * Approves a `ready` statement (409 for any other status). A statement whose balances do not
 * reconcile (`balance_mismatch`) is approved only with `acknowledgeBalanceMismatch`: 409 otherwise,
 * naming the difference and its currency; the acknowledgement is recorded with who gave it.
 */
export async function approveStatement(
  deps: Pick<CashAppDeps, 'db'>,
  who: { organizationId: string; userId: string | null },
  statementId: string,
  opts: { acknowledgeBalanceMismatch: boolean },
): Promise<StatementRow> {
  const org = who.organizationId;
  const row = await statementOf(deps, org, statementId);
  // the row is locked from the check to the update: a delete or another approval waits (or finds it moved)
  await deps.db.transaction(async (trx) => {
    const now = await lockStatementForApproval(trx, org, row.id);
    if (!now) throw new NotFoundError(`No bank statement ${statementId}.`);
    if (now.status !== 'ready') throw new ConflictError(`Only a ready statement can be approved; this one is ${now.status}.`);
    const mismatch = now.balance_difference != null;
    if (mismatch && !opts.acknowledgeBalanceMismatch) {
      const ccy = now.currency?.trim() ?? '';
      throw new ConflictError(
        `The statement's balances do not reconcile: its closing balance differs from the opening balance plus its entries by ${money(now.balance_difference, ccy)} ${ccy}. ` +
          'Check it against the bank, then approve it with acknowledge_balance_mismatch: true.',
      );
    }
    await markApproved(trx, org, row.id, who.userId, mismatch);
    await recordStatementEvent(trx, org, 'bank_statement.approved', row.id);
  });
  return (await getStatement(deps.db, org, row.id))!;
}
