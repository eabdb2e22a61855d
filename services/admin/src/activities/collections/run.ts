/**
 * Activities of the collection-run workflow (workflows/src/admin/collection-run.ts): record a
 * scheduled run, plan a run by streaming the ledger (resumable), do planned actions in bounded
 * batches with bounded concurrency, record unrecorded sends, end the run.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { collectionCandidatesPage, partnerEmailAddresses, type Db } from '@rp/platform';
import type { CollectionRunActivities, DoActionsResult, UnrecordedSend } from '@rp/workflows';
import * as runs from '../../store/collections/runs.js';
import * as actions from '../../store/collections/actions.js';
import { bouncingAmong } from '../../store/inbox/bounces.js';
import { planCustomer, type PlannedAction } from '../../domain/collections/plan.js';
import { batchLookups, doEmailAction, doTaskAction, recordActionSent, type DoOutcome, type OutreachDeps } from '../../domain/collections/outreach.js';
import { organizationToday } from '../../store/ooo.js';
import { doSmsAction, quietWaitMs, type SmsDeps } from '../../domain/collections/outreach-sms.js';

export interface CollectionRunDeps extends OutreachDeps, Pick<SmsDeps, 'sms' | 'smsFrom'> {
  /** customers per planning page */
  planPageSize?: number;
  /** planned actions per doing batch, and how many of them are in flight at once */
  actBatchSize?: number;
  actConcurrency?: number;
}

/** Runs `fn` over `items` with at most `limit` in flight, answers in input order. */
async function boundedMap<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  });
  await Promise.all(lanes);
  return out;
}

async function runOrFail(db: Db, organizationId: string, runId: string) {
  const run = await runs.getRun(db, organizationId, runId);
  // The API starts the workflow before its transaction commits the run: until it does, retry (a run
  // whose transaction rolled back never appears, and its workflow gives up with the retry window).
  if (!run) throw ApplicationFailure.retryable(`The collection run ${runId} is not recorded (yet).`, 'CollectionRunNotRecorded');
  return run;
}

/** Plans one page of customers: their actions (with sender), written with the page's cursor in one transaction. */
async function planPage(deps: CollectionRunDeps, run: runs.RunRow, policies: runs.PolicyForRun[], page: Awaited<ReturnType<typeof collectionCandidatesPage>>, defaultSender: string | null): Promise<number> {
  const { db } = deps;
  const org = run.organization_id;
  const invoiceIds = page.partners.flatMap((p) => p.invoices.map((i) => i.id));
  const assignees = page.partners.map((p) => p.assignee_id).filter((a): a is string => a !== null);
  const [{ marks, actedOn }, onHold, backups, active, bouncing] = await Promise.all([
    runs.stepMarks(db, org, invoiceIds, run.as_of_date),
    runs.invoicesOnHold(db, org, invoiceIds),
    runs.backupsOn(db, org, assignees, run.as_of_date),
    runs.activeUserIds(db, org, assignees),
    bouncingAmong(db, org, page.partners.flatMap((p) => partnerEmailAddresses(p.email))),
  ]);
  const stepsOf = new Map(policies.map((p) => [p.id, p.steps]));
  const rows: actions.NewAction[] = [];
  for (const customer of page.partners) {
    const steps = stepsOf.get(customer.policy_id) ?? [];
    const customerMarks = new Map(customer.invoices.map((i) => [i.id, marks.get(`${customer.policy_id}:${i.id}`) ?? new Set<number>()]));
    // one step per invoice per day: an invoice a run of this date acted on waits for the next day
    const fresh = { ...customer, invoices: customer.invoices.filter((i) => !actedOn.has(i.id)) };
    const planned: PlannedAction[] = planCustomer(fresh, steps, run.as_of_date, customerMarks, onHold, bouncing);
    // the assignee; while out of office that day, the backup covering them; else the default sender
    const assignee = customer.assignee_id && active.has(customer.assignee_id) ? customer.assignee_id : null;
    const sender = assignee ? (backups.get(assignee) ?? assignee) : defaultSender;
    for (const p of planned) {
      rows.push({
        partner_id: customer.id,
        business_unit_id: customer.business_unit_id,
        policy_id: p.policy_id,
        step_index: p.step.step_index,
        offset_days: p.step.offset_days,
        channel: p.step.channel,
        invoice_ids: p.invoice_ids,
        skip_reason: p.skip_reason,
        sender_user_id: sender,
      });
    }
  }
  return db.transaction(async (trx) => {
    const written = await actions.writeActions(trx, run, rows);
    await runs.setPlanProgress(trx, run.id, page.partners.at(-1)?.id ?? null, page.next === null);
    return written;
  });
}

export function createCollectionRunActivities(deps: CollectionRunDeps): CollectionRunActivities {
  const { db } = deps;
  const pageSize = deps.planPageSize ?? 500;
  const batchSize = deps.actBatchSize ?? 200;
  const concurrency = deps.actConcurrency ?? 16;
  return {
    async recordScheduledCollectionRun({ organizationId, runId }) {
      const today = await organizationToday(db, organizationId);
      if (!today) return { skipped: 'The organization no longer exists.' };
      const existing = await runs.getRun(db, organizationId, runId);
      if (existing) return { runId };
      await runs.insertScheduledRun(db, { id: runId, organization_id: organizationId, as_of_date: today });
      return { runId };
    },

    async planCollectionRun({ organizationId, runId }) {
      const ctx = Context.current();
      const run = await runOrFail(db, organizationId, runId);
      if (run.planned_at || run.status !== 'running') return { dryRun: run.dry_run };
      const policies = await runs.enabledPolicies(db, organizationId);
      const withSteps = policies.filter((p) => p.steps.length > 0);
      // the smallest offset of any step: invoices due after `as_of_date - it` cannot be due for a step yet
      const maxBack = withSteps.length ? Math.min(...withSteps.flatMap((p) => p.steps.map((s) => s.offset_days))) : 0;
      const defaultSender = await runs.defaultSenderId(db, organizationId);
      let after = run.plan_cursor;
      let partners = 0;
      for (;;) {
        const page = await collectionCandidatesPage(db, organizationId, {
          asOfDate: run.as_of_date,
          policies: withSteps.map((p) => ({ policyId: p.id, condition: p.segment_id ? p.conditions : null })),
          after,
          limit: pageSize,
          earliestOffsetDays: maxBack,
        });
        await planPage(deps, run, withSteps, page, defaultSender);
        partners += page.partners.length;
        ctx.heartbeat({ partners });
        if (page.next === null) break;
        after = page.next;
      }
      return { dryRun: run.dry_run };
    },

    async doCollectionActions({ organizationId, runId, after, lastPass }): Promise<DoActionsResult> {
      const ctx = Context.current();
      const run = await runOrFail(db, organizationId, runId);
      const batch = await actions.plannedActions(db, runId, after, batchSize);
      // quiet hours hold every text of the batch (they are the organization's, so all or none)
      const quietMs = batch.some((a) => a.channel === 'sms') ? await quietWaitMs(deps, organizationId) : 0;
      const lookups = batchLookups(db, organizationId, deps.inboundDomain);
      const messages = await actions.messagesOfActions(db, batch.filter((a) => a.channel !== 'task').map((a) => a.id));
      const beat = setInterval(() => ctx.heartbeat(), 5000);
      let outcomes: (DoOutcome | { status: 'error'; err: unknown })[];
      try {
        outcomes = await boundedMap(batch, concurrency, async (a) => {
          try {
            if (a.channel === 'task') return await doTaskAction(deps, a, run.as_of_date);
            if (a.channel === 'email') return await doEmailAction(deps, a, run.as_of_date, lastPass, lookups, messages.get(a.id) ?? null);
            if (quietMs > 0) return { status: 'quiet', untilMs: quietMs } as const;
            return await doSmsAction(deps, a, run.as_of_date, lastPass, lookups, messages.get(a.id) ?? null);
          } catch (err) {
            return { status: 'error', err } as const;
          }
        });
      } finally {
        clearInterval(beat);
      }
      const unrecorded: UnrecordedSend[] = [];
      outcomes.forEach((o, i) => {
        if (o.status === 'unrecorded') unrecorded.push({ actionId: batch[i]!.id, messageId: o.messageId, providerMessageId: o.providerMessageId, segments: o.segments });
      });
      // An infrastructure error of one action fails the attempt (retried) — unless sends of this attempt
      // still need their record: then they are answered first and the errored actions, still planned,
      // are done by the next pass.
      const failure = outcomes.find((o): o is { status: 'error'; err: unknown } => o.status === 'error');
      if (failure && unrecorded.length === 0) throw failure.err;
      if (failure) deps.log.warn({ err: failure.err, run_id: runId }, 'collection actions left planned after an error; the next pass does them');
      if (batch.length === batchSize) return { next: batch.at(-1)!.id, unrecorded, remaining: 0, quietWaitMs: 0 };
      const remaining = await actions.countPlanned(db, runId);
      // texts held by quiet hours (in this batch or an earlier one of the pass): the run sleeps until they end
      const waiting = await actions.countPlanned(db, runId, 'sms');
      const quietWait = waiting > 0 ? await quietWaitMs(deps, organizationId) : 0;
      return { next: null, unrecorded, remaining: Math.max(0, remaining - unrecorded.length), quietWaitMs: quietWait };
    },

    async recordCollectionActionsSent({ organizationId, sends }) {
      for (const s of sends) await recordActionSent(db, organizationId, s.actionId, s);
    },

    async completeCollectionRun({ organizationId, runId, status, error }) {
      await runs.endRun(db, organizationId, runId, status, error);
    },
  };
}
