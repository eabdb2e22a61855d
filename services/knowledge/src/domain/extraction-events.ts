/**
 * Knowledge's events (kernel events/): `extraction.completed`, `extraction.failed` and
 * `proposal.created`, each recorded in the transaction of the change it reports, with the resource as
 * its GET returns it, read inside that transaction. The job's end is a conditional transition, so an
 * activity retried after its change committed (or a cancel racing the workflow) records nothing twice;
 * proposals are recorded for the rows an insert actually added.
 */
import { getPartners, recordEvent, recordEvents, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import * as store from '../store/extractions.js';
import { getFilesByIds } from '../store/files.js';
import { articleCustomers, getProposalsByIds } from '../store/proposals.js';
import { jobView } from '../views/extractions.js';
import { proposalView } from '../views/proposals.js';

/** The job as `GET /v2/aether/playbook/extractions/{id}` answers it, read in `trx`. */
async function jobAsApi(trx: Knex.Transaction, organizationId: string, id: string) {
  const job = (await store.getJob(trx, organizationId, id))!;
  const files = await getFilesByIds(trx, organizationId, job.file_id ? [job.file_id] : []);
  return jobView({ job, file: job.file_id ? (files.get(job.file_id) ?? null) : null });
}

/** Moves the job from `synthesizing` to `complete` and records `extraction.completed`; false when it was elsewhere. */
export async function completeJobRecorded(db: Db, organizationId: string, id: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    if (!(await store.transitionJob(trx, organizationId, id, ['synthesizing'], 'complete', { completed_at: trx.fn.now() }))) return false;
    // Extraction jobs belong to the organization, not to a business unit.
    await recordEvent(trx, { organizationId, type: 'extraction.completed', resourceId: id, object: await jobAsApi(trx, organizationId, id) });
    return true;
  });
}

/** Ends the job `failed` with `error` unless it already ended, and records `extraction.failed`; false when it had ended. */
export async function failJobRecorded(db: Db, organizationId: string, id: string, error: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    if (!(await store.failJob(trx, organizationId, id, error))) return false;
    await recordEvent(trx, { organizationId, type: 'extraction.failed', resourceId: id, object: await jobAsApi(trx, organizationId, id) });
    return true;
  });
}

/**
 * Records `proposal.created` for proposals just inserted in `trx` (one multi-row insert per chunk).
 * Business unit: that of the proposal's customer, else that of its target article's customer (the
 * ledger partner's unit, read through the kernel ledger module); none when neither names a partner
 * tied to a unit, so the event log shows the event to whoever may see the proposal's customer.
 */
export async function recordProposalsCreated(trx: Db | Knex.Transaction, organizationId: string, ids: readonly string[]): Promise<void> {
  const rows = await getProposalsByIds(trx, organizationId, ids);
  if (!rows.length) return;
  const targets = await articleCustomers(trx, organizationId, rows.flatMap((r) => (r.article_id && !r.customer_id ? [r.article_id] : [])));
  const customerOf = (r: (typeof rows)[number]) => r.customer_id ?? (r.article_id ? (targets.get(r.article_id) ?? null) : null);
  const partners = await getPartners(trx, organizationId, rows.flatMap((r) => customerOf(r) ?? []));
  await recordEvents(
    trx,
    rows.map((r) => {
      const customer = customerOf(r);
      return { organizationId, type: 'proposal.created' as const, resourceId: r.id, object: proposalView(r), businessUnitId: customer ? (partners.get(customer)?.business_unit_id ?? null) : null };
    }),
  );
}
