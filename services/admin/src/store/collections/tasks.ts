/**
 * Follow-up tasks of the collections engine (admin migration 012, collection_tasks). A task step of a
 * policy creates one per action (action_id unique); people list them and mark them done. Each task
 * carries its customer's business_unit_id (copied from the partner) for business-unit scope.
 */
import { newId, whereInScope, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export interface TaskRow {
  id: string;
  organization_id: string;
  partner_id: string;
  business_unit_id: string | null;
  action_id: string | null;
  assignee_id: string | null;
  title: string;
  invoice_ids: string[];
  status: 'open' | 'done';
  note: string | null;
  /** YYYY-MM-DD (dates are read as text) */
  due_date: string | null;
  completed_at: Date | null;
  completed_by: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface NewTask {
  organization_id: string;
  partner_id: string;
  /** the partner's business unit when the task is created (null: none) */
  business_unit_id: string | null;
  /** the collection action the task carries out; null for a task not made by a run */
  action_id: string | null;
  /** who should do it (the action's sender); null: nobody yet */
  assignee_id: string | null;
  /** at most 500 characters */
  title: string;
  invoice_ids: readonly string[];
  /** YYYY-MM-DD, or null */
  due_date: string | null;
  note?: string | null;
}

/**
 * Inserts an open task inside the caller's transaction (the engine calls it in the transaction that
 * records its action). Idempotent per action: a second call with the same `action_id` inserts nothing and
 * returns the task already there, so a retried activity never makes two tasks for one action.
 * `assignee_id` must be a user of the organization or null (foreign key).
 */
export async function insertTask(trx: Q, row: NewTask): Promise<TaskRow> {
  const [inserted] = (await trx('collection_tasks')
    .insert({
      id: newId(),
      organization_id: row.organization_id,
      partner_id: row.partner_id,
      business_unit_id: row.business_unit_id,
      action_id: row.action_id,
      assignee_id: row.assignee_id,
      title: row.title,
      invoice_ids: [...row.invoice_ids],
      due_date: row.due_date,
      note: row.note ?? null,
    })
    .onConflict('action_id')
    .ignore()
    .returning('*')) as TaskRow[];
  if (inserted) return inserted;
  return (await trx('collection_tasks').where({ organization_id: row.organization_id, action_id: row.action_id }).first()) as TaskRow;
}

export interface TaskFilter {
  assignee_id?: string;
  partner_id?: string;
  status?: 'open' | 'done';
}

function filtered(db: Q, organizationId: string, scope: BusinessUnitScope, f: TaskFilter): Knex.QueryBuilder {
  const q = db('collection_tasks').where({ organization_id: organizationId });
  if (f.assignee_id) void q.andWhere({ assignee_id: f.assignee_id });
  if (f.partner_id) void q.andWhere({ partner_id: f.partner_id });
  if (f.status) void q.andWhere({ status: f.status });
  return whereInScope(q, scope);
}

/** A page of the tasks in the caller's business-unit scope, newest first. */
export async function listTasks(db: Db, organizationId: string, scope: BusinessUnitScope, f: TaskFilter, offset: number, limit: number): Promise<{ rows: TaskRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    filtered(db, organizationId, scope, f).orderBy('created_at', 'desc').orderBy('id', 'desc').offset(offset).limit(limit) as Promise<TaskRow[]>,
    filtered(db, organizationId, scope, f).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows, total: Number(count) };
}

/** The task when it is in the caller's scope. */
export async function getTask(db: Q, organizationId: string, scope: BusinessUnitScope, id: string): Promise<TaskRow | undefined> {
  return whereInScope(db('collection_tasks').where({ organization_id: organizationId, id }), scope).first();
}

/**
 * Sets status and/or note of a task in scope. Done: completed_at and completed_by are set when it becomes
 * done (kept when it already was); open: both cleared. undefined when unknown or out of scope.
 */
export async function updateTask(
  db: Db,
  organizationId: string,
  scope: BusinessUnitScope,
  id: string,
  patch: { status?: 'open' | 'done'; note?: string | null },
  by: string | null,
): Promise<TaskRow | undefined> {
  const set: Record<string, unknown> = { modified_at: db.fn.now() };
  if (patch.note !== undefined) set.note = patch.note;
  if (patch.status === 'open') Object.assign(set, { status: 'open', completed_at: null, completed_by: null });
  if (patch.status === 'done') {
    Object.assign(set, {
      status: 'done',
      completed_at: db.raw(`CASE WHEN status = 'done' THEN completed_at ELSE now() END`),
      completed_by: db.raw(`CASE WHEN status = 'done' THEN completed_by ELSE ?::uuid END`, [by]),
    });
  }
  const [row] = (await whereInScope(db('collection_tasks').where({ organization_id: organizationId, id }), scope).update(set).returning('*')) as TaskRow[];
  return row;
}
