/** SQL of report configs, their runs and the report emails (admin schema). */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Conn = Db | Knex.Transaction;

export type ReportType = 'integration_sync_report' | 'ar_aging_report';
export type Frequency = 'daily' | 'weekly' | 'monthly';

export interface ReportConfigRow {
  id: string;
  organization_id: string;
  report_type: ReportType;
  frequency: Frequency;
  time: string;
  weekday: number | null;
  recipient_emails: string[];
  cc_emails: string[];
  is_enabled: boolean;
  last_sent_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

export type ReportConfigFields = Pick<ReportConfigRow, 'report_type' | 'frequency' | 'time' | 'weekday' | 'recipient_emails' | 'cc_emails' | 'is_enabled'>;

/** Inserts the config; null when the organization already has one of this type (the unique index decides races). */
export async function insertReportConfig(db: Conn, organizationId: string, fields: ReportConfigFields): Promise<ReportConfigRow | null> {
  const rows = await db<ReportConfigRow>('report_configs')
    .insert({ id: newId(), organization_id: organizationId, ...fields })
    .onConflict(['organization_id', 'report_type'])
    .ignore()
    .returning('*');
  return rows[0] ?? null;
}

export async function getReportConfig(db: Conn, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<ReportConfigRow | undefined> {
  const q = db<ReportConfigRow>('report_configs').where({ organization_id: organizationId, id });
  if (opts.forUpdate) void q.forUpdate();
  return q.first();
}

/** A config by id alone (the report workflow's activities, which carry the organization id to check it). */
export async function findReportConfig(db: Conn, id: string): Promise<ReportConfigRow | undefined> {
  return db<ReportConfigRow>('report_configs').where({ id }).first();
}

export async function listReportConfigs(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: ReportConfigRow[]; total: number }> {
  const [rows, [{ n }]] = await Promise.all([
    db<ReportConfigRow>('report_configs').where({ organization_id: organizationId }).orderBy([{ column: 'report_type' }, { column: 'id' }]).offset(offset).limit(limit),
    db('report_configs').where({ organization_id: organizationId }).count<{ n: string }[]>({ n: '*' }),
  ]);
  return { rows, total: Number(n) };
}

export async function listReportConfigsOfOrganization(db: Conn, organizationId: string): Promise<ReportConfigRow[]> {
  return db<ReportConfigRow>('report_configs').where({ organization_id: organizationId }).orderBy('id');
}

export async function updateReportConfig(db: Conn, organizationId: string, id: string, fields: Partial<ReportConfigFields>): Promise<ReportConfigRow | undefined> {
  const [row] = await db<ReportConfigRow>('report_configs')
    .where({ organization_id: organizationId, id })
    .update({ ...fields, modified_at: db.fn.now() } as unknown as Partial<ReportConfigRow>)
    .returning('*');
  return row;
}

export async function deleteReportConfig(db: Conn, organizationId: string, id: string): Promise<ReportConfigRow | undefined> {
  const [row] = await db<ReportConfigRow>('report_configs').where({ organization_id: organizationId, id }).delete().returning('*');
  return row;
}

// ── runs ─────────────────────────────────────────────────────────────────────────────────────────

export type RunStatus = 'running' | 'sent' | 'failed';

export interface ReportRunRow {
  id: string;
  organization_id: string;
  config_id: string;
  report_type: ReportType;
  trigger: 'schedule' | 'manual';
  idempotency_key: string;
  scheduled_for: Date;
  status: RunStatus;
  as_of_date: string | null;
  period_start: Date | null;
  period_end: Date | null;
  row_count: number | null;
  counts: Record<string, number> | null;
  delivery: ReportDelivery | null;
  error: string | null;
  sent_at: Date | null;
  created_at: Date;
  modified_at: Date;
}

/** How each file reached the recipients: attached, or linked (presigned, with its expiry) when over the attachment limit. */
export type ReportDelivery = { filename: string; size: number; mode: 'attached' | 'linked'; link_expires_at?: string }[];

/** Finds or creates the run of this idempotency key (a retried or re-delivered action finds its run again). */
export async function claimReportRun(
  db: Conn,
  input: { id?: string; organizationId: string; configId: string; reportType: ReportType; trigger: 'schedule' | 'manual'; idempotencyKey: string; scheduledFor: Date },
): Promise<ReportRunRow> {
  await db('report_runs')
    .insert({
      id: input.id ?? newId(),
      organization_id: input.organizationId,
      config_id: input.configId,
      report_type: input.reportType,
      trigger: input.trigger,
      idempotency_key: input.idempotencyKey,
      scheduled_for: input.scheduledFor,
      status: 'running',
    })
    .onConflict('idempotency_key')
    .ignore();
  return (await db<ReportRunRow>('report_runs').where({ idempotency_key: input.idempotencyKey }).first())!;
}

export async function getReportRun(db: Conn, organizationId: string, id: string): Promise<ReportRunRow | undefined> {
  return db<ReportRunRow>('report_runs').where({ organization_id: organizationId, id }).first();
}

export async function listReportRuns(db: Db, organizationId: string, configId: string, offset: number, limit: number): Promise<{ rows: ReportRunRow[]; total: number }> {
  const where = { organization_id: organizationId, config_id: configId };
  const [rows, [{ n }]] = await Promise.all([
    db<ReportRunRow>('report_runs').where(where).orderBy([{ column: 'scheduled_for', order: 'desc' }, { column: 'id', order: 'desc' }]).offset(offset).limit(limit),
    db('report_runs').where(where).count<{ n: string }[]>({ n: '*' }),
  ]);
  return { rows, total: Number(n) };
}

export async function setRunPlan(db: Conn, id: string, plan: { as_of_date: string; period_start: string; period_end: string }): Promise<void> {
  await db('report_runs').where({ id }).update({ ...plan, modified_at: db.fn.now() });
}

export async function setRunBuilt(db: Conn, id: string, built: { row_count: number; counts: Record<string, number>; delivery: ReportDelivery }): Promise<void> {
  await db('report_runs')
    .where({ id })
    .update({ row_count: built.row_count, counts: JSON.stringify(built.counts), delivery: JSON.stringify(built.delivery), modified_at: db.fn.now() });
}

export async function setRunDelivery(db: Conn, id: string, delivery: ReportDelivery): Promise<void> {
  await db('report_runs').where({ id }).update({ delivery: JSON.stringify(delivery), modified_at: db.fn.now() });
}

/**
 * Ends a running run `failed` with `error`; the run when this call ended it, null when it had already
 * ended (sent, or failed by an earlier attempt of the same call: a failed run is never re-run).
 */
export async function markRunFailed(db: Conn, organizationId: string, id: string, error: string): Promise<ReportRunRow | null> {
  const [run] = await db<ReportRunRow>('report_runs')
    .where({ organization_id: organizationId, id, status: 'running' })
    .update({ status: 'failed', error: error.slice(0, 2000), modified_at: db.fn.now() })
    .returning('*');
  return run ?? null;
}

/**
 * The run and its config after the email went out: `sent_at` and `last_sent_at` (never moved
 * backwards). Returns the run when this call moved it to `sent`, null when it already was (a retry).
 */
export async function markRunSent(db: Knex.Transaction, organizationId: string, id: string, sentAt: Date): Promise<ReportRunRow | null> {
  const prior = await db<ReportRunRow>('report_runs').where({ organization_id: organizationId, id }).forUpdate().first('status');
  // Recorded by an earlier attempt (with the config's last_sent_at, in its transaction): nothing changes.
  if (!prior || prior.status === 'sent') return null;
  const [run] = await db<ReportRunRow>('report_runs')
    .where({ organization_id: organizationId, id })
    .update({ status: 'sent', sent_at: db.raw('COALESCE(sent_at, ?)', [sentAt]) as unknown as Date, error: null, modified_at: db.fn.now() })
    .returning('*');
  await db('report_configs')
    .where({ id: run!.config_id })
    .update({ last_sent_at: db.raw('GREATEST(COALESCE(last_sent_at, ?), ?)', [run!.sent_at, run!.sent_at]) });
  return run!;
}

// ── the run's email (intent before the SMTP call, outcome after) ─────────────────────────────────

export interface ReportEmailRow {
  id: string;
  run_id: string;
  organization_id: string;
  to_addresses: string[];
  cc_addresses: string[];
  subject: string;
  status: 'sending' | 'sent';
  message_id: string | null;
  attempts: number;
  last_error: string | null;
  sent_at: Date | null;
}

/** The run's email intent: created once (the run id is unique), or the existing one returned. */
export async function claimReportEmail(db: Conn, input: { runId: string; organizationId: string; to: string[]; cc: string[]; subject: string }): Promise<ReportEmailRow> {
  await db('report_emails')
    .insert({ id: newId(), run_id: input.runId, organization_id: input.organizationId, to_addresses: input.to, cc_addresses: input.cc, subject: input.subject, status: 'sending' })
    .onConflict('run_id')
    .ignore();
  return (await db<ReportEmailRow>('report_emails').where({ run_id: input.runId }).first())!;
}

export async function getReportEmail(db: Conn, id: string): Promise<ReportEmailRow | undefined> {
  return db<ReportEmailRow>('report_emails').where({ id }).first();
}

/** Right before the SMTP call, in one statement: counts the attempt unless the email is recorded sent (then says so). */
export async function beginReportEmailAttempt(db: Conn, id: string): Promise<{ sent: false } | { sent: true; messageId: string | null }> {
  const counted = await db('report_emails').where({ id }).whereNot({ status: 'sent' }).update({ attempts: db.raw('attempts + 1'), modified_at: db.fn.now() }, ['id']);
  if (counted.length) return { sent: false };
  const row = await getReportEmail(db, id);
  if (!row) throw new Error(`report email ${id} does not exist`);
  return { sent: true, messageId: row.message_id };
}

export async function markReportEmailError(db: Conn, id: string, error: string): Promise<void> {
  await db('report_emails').where({ id }).update({ last_error: error.slice(0, 2000), modified_at: db.fn.now() });
}

/** Returns the time the email was recorded sent (the first recording wins). */
export async function markReportEmailSent(db: Conn, id: string, messageId: string): Promise<Date> {
  const [row] = await db<ReportEmailRow>('report_emails')
    .where({ id })
    .update({
      status: 'sent',
      message_id: db.raw('COALESCE(message_id, ?)', [messageId]),
      sent_at: db.raw('COALESCE(sent_at, now())'),
      last_error: null,
      modified_at: db.fn.now(),
    } as unknown as Partial<ReportEmailRow>)
    .returning('*');
  return row!.sent_at!;
}
