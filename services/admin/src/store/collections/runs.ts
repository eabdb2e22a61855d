/** SQL of collection runs, their policies' steps, step marks and holds (admin schema, migrations 012 and 014). */
import { newId, type Condition, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { PlanStep } from '../../domain-types/collections.js';

type Conn = Db | Knex.Transaction;

export interface RunRow {
  id: string;
  organization_id: string;
  as_of_date: string;
  dry_run: boolean;
  trigger: 'schedule' | 'api';
  requested_by: string | null;
  status: 'running' | 'completed' | 'failed';
  error: string | null;
  started_at: Date;
  completed_at: Date | null;
  plan_cursor: string | null;
  planned_at: Date | null;
}

export interface RunCounts {
  planned: number;
  sent: number;
  skipped: number;
  failed: number;
}

const COUNTS = `(SELECT count(*) FILTER (WHERE a.status <> 'skipped')::int FROM collection_actions a WHERE a.run_id = r.id) AS planned,
  (SELECT count(*) FILTER (WHERE a.status = 'sent')::int FROM collection_actions a WHERE a.run_id = r.id) AS sent,
  (SELECT count(*) FILTER (WHERE a.status = 'skipped')::int FROM collection_actions a WHERE a.run_id = r.id) AS skipped,
  (SELECT count(*) FILTER (WHERE a.status = 'failed')::int FROM collection_actions a WHERE a.run_id = r.id) AS failed`;

const RUN_COLUMNS = `r.id, r.organization_id, to_char(r.as_of_date, 'YYYY-MM-DD') AS as_of_date, r.dry_run, r.trigger, r.requested_by, r.status, r.error,
  r.started_at, r.completed_at, r.plan_cursor, r.planned_at`;

export async function insertRun(db: Conn, r: { organization_id: string; as_of_date: string; dry_run: boolean; trigger: 'schedule' | 'api'; requested_by: string | null; id?: string }): Promise<RunRow & RunCounts> {
  const [row] = (await db('collection_runs').insert({ id: r.id ?? newId(), ...r }).returning('id')) as { id: string }[];
  return (await getRun(db, r.organization_id, row!.id))!;
}

/** Records a Schedule's real run with the id its workflow chose (a retried record inserts nothing). */
export async function insertScheduledRun(db: Conn, r: { id: string; organization_id: string; as_of_date: string }): Promise<void> {
  await db('collection_runs').insert({ ...r, dry_run: false, trigger: 'schedule' }).onConflict('id').ignore();
}

export async function getRun(db: Conn, organizationId: string, id: string): Promise<(RunRow & RunCounts) | undefined> {
  const res = await db.raw(`SELECT ${RUN_COLUMNS}, ${COUNTS} FROM collection_runs r WHERE r.organization_id = ? AND r.id = ?`, [organizationId, id]);
  return res.rows[0] as (RunRow & RunCounts) | undefined;
}

export async function listRuns(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: (RunRow & RunCounts)[]; total: number }> {
  const [res, [{ count }]] = await Promise.all([
    db.raw(`SELECT ${RUN_COLUMNS}, ${COUNTS} FROM collection_runs r WHERE r.organization_id = ? ORDER BY r.started_at DESC, r.id DESC OFFSET ? LIMIT ?`, [organizationId, offset, limit]),
    db('collection_runs').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: res.rows as (RunRow & RunCounts)[], total: Number(count) };
}

/** Ends a running run (completed or failed); false when it had already ended. */
export async function endRun(db: Conn, organizationId: string, id: string, status: 'completed' | 'failed', error: string | null): Promise<boolean> {
  const n = await db('collection_runs').where({ organization_id: organizationId, id, status: 'running' }).update({ status, error, completed_at: db.fn.now(), modified_at: db.fn.now() });
  return n > 0;
}

/** Records planning progress: the last customer whose actions are committed, and whether planning is done. */
export async function setPlanProgress(trx: Conn, runId: string, cursor: string | null, done: boolean): Promise<void> {
  await trx('collection_runs').where({ id: runId }).update({ ...(cursor ? { plan_cursor: cursor } : {}), ...(done ? { planned_at: trx.fn.now() } : {}), modified_at: trx.fn.now() });
}

export interface PolicyForRun {
  id: string;
  segment_id: string | null;
  priority: number | null;
  conditions: Condition | null;
  steps: PlanStep[];
}

/** Enabled policies with their steps (by offset), by their segment's priority (1 first), the default policy last. */
export async function enabledPolicies(db: Conn, organizationId: string): Promise<PolicyForRun[]> {
  const policies = (await db('collection_policies as p')
    .leftJoin('customer_segments as s', 's.id', 'p.segment_id')
    .select('p.id', 'p.segment_id', 's.priority', 's.conditions')
    .where({ 'p.organization_id': organizationId, 'p.is_enabled': true })
    .orderByRaw('s.priority ASC NULLS LAST, p.id')) as Omit<PolicyForRun, 'steps'>[];
  if (policies.length === 0) return [];
  const steps = (await db('collection_policy_steps')
    .select('policy_id', 'step_index', 'offset_days', 'channel', 'email_template_id', 'sms_template_id', db.raw('min_overdue_lc::text AS min_overdue_lc'))
    .whereIn('policy_id', policies.map((p) => p.id))
    .orderBy(['policy_id', 'offset_days'])) as (PlanStep & { policy_id: string })[];
  return policies.map((p) => ({ ...p, steps: steps.filter((s) => s.policy_id === p.id).map(({ policy_id: _policy, ...s }) => { void _policy; return s; }) }));
}

/**
 * Offsets done per (policy, invoice) (key `policyId:invoiceId`), and the invoices a mark was taken
 * for by a run as of `asOf` (acted on that day already).
 */
export async function stepMarks(db: Conn, organizationId: string, invoiceIds: readonly string[], asOf: string): Promise<{ marks: Map<string, Set<number>>; actedOn: Set<string> }> {
  const marks = new Map<string, Set<number>>();
  const actedOn = new Set<string>();
  if (invoiceIds.length === 0) return { marks, actedOn };
  const rows = (await db('collection_step_marks as k')
    .join('collection_actions as a', 'a.id', 'k.action_id')
    .join('collection_runs as r', 'r.id', 'a.run_id')
    .select('k.policy_id', 'k.invoice_id', 'k.offset_days', db.raw('(r.as_of_date = ?::date) AS today', [asOf]))
    .where('k.organization_id', organizationId)
    .whereIn('k.invoice_id', [...invoiceIds])) as { policy_id: string; invoice_id: string; offset_days: number; today: boolean }[];
  for (const r of rows) {
    const key = `${r.policy_id}:${r.invoice_id}`;
    const set = marks.get(key) ?? new Set<number>();
    set.add(r.offset_days);
    marks.set(key, set);
    if (r.today) actedOn.add(r.invoice_id);
  }
  return { marks, actedOn };
}

/** Which of the invoices are on hold: under an open promise to pay or an open dispute. */
export async function invoicesOnHold(db: Conn, organizationId: string, invoiceIds: readonly string[]): Promise<Set<string>> {
  if (invoiceIds.length === 0) return new Set();
  const res = await db.raw(
    `SELECT i.id FROM unnest(?::uuid[]) AS i(id)
     WHERE EXISTS (SELECT 1 FROM promises_to_pay t WHERE t.organization_id = ? AND t.status = 'open' AND t.invoice_ids @> ARRAY[i.id])
        OR EXISTS (SELECT 1 FROM disputes d WHERE d.organization_id = ? AND d.status = 'open' AND d.invoice_id = i.id)`,
    [[...invoiceIds], organizationId, organizationId],
  );
  return new Set((res.rows as { id: string }[]).map((r) => r.id));
}

/** The user covering each of `userIds` on `date` (their OOO backup), for those out that day. */
export async function backupsOn(db: Conn, organizationId: string, userIds: readonly string[], date: string): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = (await db('user_ooo')
    .select('user_id', 'backup_user_id')
    .where({ organization_id: organizationId })
    .whereIn('user_id', [...new Set(userIds)])
    .andWhere('start_date', '<=', date)
    .andWhere((w) => {
      void w.whereNull('end_date').orWhere('end_date', '>=', date);
    })) as { user_id: string; backup_user_id: string }[];
  return new Map(rows.map((r) => [r.user_id, r.backup_user_id]));
}

/** Which of `userIds` are active users of the organization. */
export async function activeUserIds(db: Conn, organizationId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const ids = (await db('users').where({ organization_id: organizationId }).whereNull('deactivated_at').whereIn('id', [...new Set(userIds)]).pluck('id')) as string[];
  return new Set(ids);
}

/** The organization's default sender: its earliest-created active admin user (null when none). */
export async function defaultSenderId(db: Conn, organizationId: string): Promise<string | null> {
  const row = (await db('users').select('id').where({ organization_id: organizationId, role: 'admin' }).whereNull('deactivated_at').orderBy(['created_at', 'id']).first()) as { id: string } | undefined;
  return row?.id ?? null;
}
