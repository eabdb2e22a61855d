/** SQL of collection actions, their exactly-once step marks and their messages (admin schema, migration 012). */
import { newId, type BusinessUnitScope, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { SkipReason } from '../../domain-types/collections.js';

type Conn = Db | Knex.Transaction;

export type ActionStatus = 'planned' | 'sent' | 'skipped' | 'failed';
export type Channel = 'email' | 'sms' | 'task';

export interface ActionRow {
  id: string;
  organization_id: string;
  run_id: string;
  partner_id: string;
  business_unit_id: string | null;
  policy_id: string | null;
  step_index: number;
  offset_days: number;
  channel: Channel;
  invoice_ids: string[];
  status: ActionStatus;
  skip_reason: SkipReason | null;
  sender_user_id: string | null;
  error: string | null;
  sent_at: Date | null;
  created_at: Date;
  modified_at: Date;
  /** collection_messages.id of an email or SMS action, collection_tasks.id of a task action */
  message_id_ref?: string | null;
  task_id?: string | null;
}

export interface NewAction {
  partner_id: string;
  business_unit_id: string | null;
  policy_id: string;
  step_index: number;
  offset_days: number;
  channel: Channel;
  invoice_ids: string[];
  skip_reason: SkipReason | null;
  sender_user_id: string | null;
}

/**
 * Writes one page of a run's actions in the caller's transaction. A real run takes the step mark of
 * every (policy, invoice, offset) a planned action covers (INSERT … ON CONFLICT DO NOTHING, in key
 * order so concurrent runs lock alike): invoices whose mark another run holds are left out, an action
 * left with none is not written. Skipped actions and dry runs take no marks. Returns the actions written.
 */
export async function writeActions(trx: Knex.Transaction, run: { id: string; organization_id: string; dry_run: boolean }, actions: readonly NewAction[]): Promise<number> {
  if (actions.length === 0) return 0;
  const rows = actions.map((a) => ({ id: newId(), organization_id: run.organization_id, run_id: run.id, ...a, status: a.skip_reason ? 'skipped' : 'planned' }));
  for (let i = 0; i < rows.length; i += 500) await trx('collection_actions').insert(rows.slice(i, i + 500));
  if (run.dry_run) return rows.length;
  const marks = rows
    .filter((r) => r.status === 'planned')
    .flatMap((r) => r.invoice_ids.map((invoice_id) => ({ organization_id: run.organization_id, policy_id: r.policy_id, invoice_id, offset_days: r.offset_days, action_id: r.id })))
    .sort((a, b) => (a.policy_id + a.invoice_id + a.offset_days).localeCompare(b.policy_id + b.invoice_id + b.offset_days));
  const taken = new Map<string, string[]>();
  for (let i = 0; i < marks.length; i += 1000) {
    const got = (await trx('collection_step_marks').insert(marks.slice(i, i + 1000)).onConflict(['policy_id', 'invoice_id', 'offset_days']).ignore().returning(['action_id', 'invoice_id'])) as {
      action_id: string;
      invoice_id: string;
    }[];
    for (const g of got) taken.set(g.action_id, [...(taken.get(g.action_id) ?? []), g.invoice_id]);
  }
  let written = rows.length;
  for (const r of rows) {
    if (r.status !== 'planned') continue;
    const mine = taken.get(r.id) ?? [];
    if (mine.length === r.invoice_ids.length) continue;
    if (mine.length === 0) {
      await trx('collection_actions').where({ id: r.id }).delete();
      written--;
    } else {
      await trx('collection_actions').where({ id: r.id }).update({ invoice_ids: r.invoice_ids.filter((id) => mine.includes(id)) });
    }
  }
  return written;
}

/** Whether the run already has actions of any of these customers (a page committed before a crash). */
export async function runHasActionsOf(db: Conn, runId: string, partnerIds: readonly string[]): Promise<boolean> {
  if (partnerIds.length === 0) return false;
  return Boolean(await db('collection_actions').select('id').where({ run_id: runId }).whereIn('partner_id', [...partnerIds]).first());
}

/** The run's next planned actions after `after` (by id): what the doing step works through. */
export async function plannedActions(db: Conn, runId: string, after: string | null, limit: number): Promise<ActionRow[]> {
  const q = db<ActionRow>('collection_actions').where({ run_id: runId, status: 'planned' });
  if (after) q.andWhere('id', '>', after);
  return (await q.orderBy('id').limit(limit)) as ActionRow[];
}

/** How many of the run's actions (of one channel) are still planned. */
export async function countPlanned(db: Conn, runId: string, channel?: Channel): Promise<number> {
  const q = db('collection_actions').where({ run_id: runId, status: 'planned' });
  if (channel) q.andWhere({ channel });
  const [{ count }] = await q.count<{ count: string }[]>({ count: '*' });
  return Number(count);
}

/** A policy's step at an offset (the step of an action, identified by its offset across edits). */
export async function policyStep(db: Conn, policyId: string, offsetDays: number): Promise<Record<string, unknown> | undefined> {
  return db('collection_policy_steps').where({ policy_id: policyId, offset_days: offsetDays }).first();
}

/** The columns of an email or SMS template a render reads (an SMS template has no subject). */
export interface TemplateRow {
  id: string;
  modified_at: Date;
  subject?: string;
  body: string;
}

export async function templateRow(db: Conn, table: 'email_templates' | 'sms_templates', organizationId: string, id: string): Promise<TemplateRow | undefined> {
  return db(table).select('id', 'modified_at', 'body', ...(table === 'email_templates' ? ['subject'] : [])).where({ organization_id: organizationId, id }).first();
}

export async function getActionRow(db: Conn, id: string): Promise<ActionRow | undefined> {
  return db<ActionRow>('collection_actions').where({ id }).first() as Promise<ActionRow | undefined>;
}

const VIEW_COLUMNS = ['a.*', 'm.id as message_id_ref', 't.id as task_id'];

function withRefs(db: Conn) {
  return db('collection_actions as a')
    .leftJoin('collection_messages as m', 'm.action_id', 'a.id')
    .leftJoin('collection_tasks as t', 't.action_id', 'a.id')
    .select(VIEW_COLUMNS);
}

/** An action as the API shows it (with its message or task id). */
export async function actionForView(db: Conn, id: string): Promise<ActionRow> {
  return (await withRefs(db).where('a.id', id).first()) as ActionRow;
}

export interface ActionFilters {
  run_id?: string;
  partner_id?: string;
  status?: ActionStatus;
  channel?: Channel;
  policy_id?: string;
}

/** The organization's actions (newest first), filtered, within the caller's business units. */
export async function listActions(db: Db, organizationId: string, f: ActionFilters, scope: BusinessUnitScope, offset: number, limit: number): Promise<{ rows: ActionRow[]; total: number }> {
  const where = (q: Knex.QueryBuilder) => {
    q.where('a.organization_id', organizationId);
    for (const k of ['run_id', 'partner_id', 'status', 'channel', 'policy_id'] as const) if (f[k] !== undefined) q.andWhere(`a.${k}`, f[k]!);
    if (scope !== '*') {
      q.andWhere((w) => {
        void w.whereNull('a.business_unit_id').orWhereIn('a.business_unit_id', [...scope]);
      });
    }
    return q;
  };
  const [rows, [{ count }]] = await Promise.all([
    where(withRefs(db)).orderBy([{ column: 'a.created_at', order: 'desc' }, { column: 'a.id', order: 'desc' }]).offset(offset).limit(limit),
    where(db('collection_actions as a')).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as ActionRow[], total: Number(count) };
}

// ---------- doing

/** Ends a planned action sent, in one statement answering it as the API shows it; null when it was no longer planned. */
export async function markActionSent(trx: Knex.Transaction, id: string): Promise<ActionRow | null> {
  const res = await trx.raw(
    `WITH u AS (UPDATE collection_actions SET status = 'sent', sent_at = now(), modified_at = now() WHERE id = ? AND status = 'planned' RETURNING *)
     SELECT u.*, m.id AS message_id_ref, t.id AS task_id FROM u
     LEFT JOIN collection_messages m ON m.action_id = u.id LEFT JOIN collection_tasks t ON t.action_id = u.id`,
    [id],
  );
  return (res.rows[0] as ActionRow | undefined) ?? null;
}

/** Ends a planned action failed and releases its step marks (the next run retries it); null when it was no longer planned. */
export async function markActionFailed(trx: Knex.Transaction, id: string, error: string): Promise<ActionRow | null> {
  const [row] = (await trx('collection_actions').where({ id, status: 'planned' }).update({ status: 'failed', error, modified_at: trx.fn.now() }).returning('id')) as { id: string }[];
  if (!row) return null;
  await trx('collection_step_marks').where({ action_id: id }).delete();
  return actionForView(trx, id);
}

export interface MessageRow {
  id: string;
  action_id: string;
  channel: 'email' | 'sms';
  to_address: string;
  from_address: string;
  reply_to: string | null;
  subject: string | null;
  body: string;
  segments: number | null;
  status: 'sending' | 'sent' | 'failed';
  attempts: number;
  message_id: string | null;
  provider_message_id: string | null;
  error: string | null;
}

/** Records the intent of an action's message once (the first intent wins: a retry sends the same message). */
export async function messageIntent(db: Conn, m: Omit<MessageRow, 'id' | 'status' | 'attempts' | 'message_id' | 'provider_message_id' | 'error'> & { organization_id: string; partner_id: string; business_unit_id: string | null }): Promise<MessageRow> {
  await db('collection_messages').insert({ id: newId(), ...m }).onConflict('action_id').ignore();
  return (await db('collection_messages').where({ action_id: m.action_id }).first()) as MessageRow;
}

/** The messages of the given actions (those that have one), by action id. */
export async function messagesOfActions(db: Conn, actionIds: readonly string[]): Promise<Map<string, MessageRow>> {
  if (actionIds.length === 0) return new Map();
  const rows = (await db('collection_messages').whereIn('action_id', [...actionIds])) as MessageRow[];
  return new Map(rows.map((m) => [m.action_id, m]));
}

export async function messageOfAction(db: Conn, actionId: string): Promise<MessageRow | undefined> {
  return db('collection_messages').where({ action_id: actionId }).first() as Promise<MessageRow | undefined>;
}

/** Claims an attempt (sendRecordedEmail step 1): counts it unless the message is recorded sent. */
export async function beginMessageAttempt(db: Conn, id: string): Promise<{ sent: false } | { sent: true; messageId: string | null }> {
  const n = await db('collection_messages').where({ id }).whereNot({ status: 'sent' }).increment('attempts', 1);
  if (n > 0) return { sent: false };
  const row = (await db('collection_messages').select('message_id', 'provider_message_id').where({ id }).first()) as { message_id: string | null; provider_message_id: string | null };
  return { sent: true, messageId: row.message_id ?? row.provider_message_id };
}

export async function markMessageSent(trx: Conn, id: string, ids: { messageId?: string | null; providerMessageId?: string | null; segments?: number | null }): Promise<void> {
  await trx('collection_messages')
    .where({ id })
    .whereNot({ status: 'sent' })
    .update({ status: 'sent', message_id: ids.messageId ?? null, provider_message_id: ids.providerMessageId ?? null, ...(ids.segments != null ? { segments: ids.segments } : {}), sent_at: trx.fn.now(), error: null, modified_at: trx.fn.now() });
}

export async function markMessageError(db: Conn, id: string, error: string, failed: boolean): Promise<void> {
  await db('collection_messages').where({ id }).whereNot({ status: 'sent' }).update({ error, ...(failed ? { status: 'failed' } : {}), modified_at: db.fn.now() });
}
