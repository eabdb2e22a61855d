/** SQL of caller-ID name registrations and their submissions (admin schema). */
import type { Knex } from 'knex';
import { newId, type Db } from '@rp/platform';
import type { CnamFields, CnamStatus } from '../domain-types/cnam.js';

export interface CnamRegistrationRow extends CnamFields {
  id: string;
  organization_id: string;
  status: CnamStatus;
  status_detail: string | null;
  user_id: string | null;
  submitted_at: Date | null;
  approved_at: Date | null;
  error_message: string | null;
  current_submission_id: string | null;
  created_at: Date;
  modified_at: Date;
}

export interface CnamSubmissionRow {
  id: string;
  registration_id: string;
  organization_id: string;
  status: 'submitted' | 'in_review' | 'approved' | 'rejected' | 'superseded';
  payload: Record<string, unknown>;
  submitted_by_user_id: string | null;
  adapter: string | null;
  registry_reference: string | null;
  handed_over_at: Date | null;
  decision_detail: string | null;
  decided_at: Date | null;
}

type Conn = Db | Knex.Transaction;

export async function getCnamRegistration(db: Conn, organizationId: string, opts: { forUpdate?: boolean } = {}): Promise<CnamRegistrationRow | undefined> {
  const q = db<CnamRegistrationRow>('cnam_registrations').where({ organization_id: organizationId });
  return (opts.forUpdate ? q.forUpdate() : q).first();
}

export async function lockCnamRegistrationById(trx: Knex.Transaction, organizationId: string, id: string): Promise<CnamRegistrationRow | undefined> {
  return trx<CnamRegistrationRow>('cnam_registrations').where({ organization_id: organizationId, id }).forUpdate().first();
}

/** Serializes the first registration of an organization (there is no row to lock yet). */
export async function lockOrganizationForCnam(trx: Knex.Transaction, organizationId: string): Promise<void> {
  await trx('organizations').where({ id: organizationId }).forUpdate().first('id');
}

export interface CnamWrite {
  fields: CnamFields;
  status: 'draft' | 'submitted';
  userId: string | null;
}

/** Creates or replaces the registration's fields with a new status; a submission stamps submitted_at (database clock) and clears the answer. */
export async function writeCnamRegistration(trx: Knex.Transaction, organizationId: string, existing: CnamRegistrationRow | undefined, w: CnamWrite): Promise<CnamRegistrationRow> {
  const values = {
    ...w.fields,
    status: w.status,
    user_id: w.userId,
    status_detail: null,
    approved_at: null,
    error_message: null,
    submitted_at: w.status === 'submitted' ? trx.fn.now() : existing?.submitted_at ?? null,
  };
  if (!existing) {
    const [row] = await trx('cnam_registrations').insert({ id: newId(), organization_id: organizationId, ...values }).returning('*');
    return row as CnamRegistrationRow;
  }
  const [row] = await trx('cnam_registrations').where({ id: existing.id }).update({ ...values, modified_at: trx.fn.now() }).returning('*');
  return row as CnamRegistrationRow;
}

export async function insertCnamSubmission(trx: Knex.Transaction, reg: CnamRegistrationRow, payload: Record<string, unknown>, userId: string | null): Promise<string> {
  const id = newId();
  await trx('cnam_submissions').insert({ id, registration_id: reg.id, organization_id: reg.organization_id, status: 'submitted', payload: JSON.stringify(payload), submitted_by_user_id: userId });
  await trx('cnam_registrations').where({ id: reg.id }).update({ current_submission_id: id });
  return id;
}

export async function getCnamSubmission(db: Conn, organizationId: string, id: string, opts: { forUpdate?: boolean } = {}): Promise<CnamSubmissionRow | undefined> {
  const q = db<CnamSubmissionRow>('cnam_submissions').where({ organization_id: organizationId, id });
  return (opts.forUpdate ? q.forUpdate() : q).first();
}

export async function markSubmissionSuperseded(trx: Knex.Transaction, id: string): Promise<void> {
  await trx('cnam_submissions').where({ id }).whereIn('status', ['submitted', 'in_review']).update({ status: 'superseded', modified_at: trx.fn.now() });
}

/** The adapter took the submission: in_review, or its final answer straight away. */
export async function recordHandOver(
  trx: Knex.Transaction,
  sub: CnamSubmissionRow,
  adapter: string,
  outcome: { status: 'in_review' | 'approved' | 'rejected'; registryReference: string | null; detail?: string | null },
): Promise<void> {
  const final = outcome.status !== 'in_review';
  await trx('cnam_submissions')
    .where({ id: sub.id })
    .update({
      status: outcome.status,
      adapter,
      registry_reference: outcome.registryReference,
      handed_over_at: trx.fn.now(),
      ...(final ? { decision_detail: outcome.detail ?? null, decided_at: trx.fn.now() } : {}),
      modified_at: trx.fn.now(),
    });
  await trx('cnam_registrations')
    .where({ id: sub.registration_id, current_submission_id: sub.id })
    .update({
      status: outcome.status,
      status_detail: final ? (outcome.detail ?? null) : null,
      approved_at: outcome.status === 'approved' ? trx.fn.now() : null,
      error_message: null,
      modified_at: trx.fn.now(),
    });
}

/** The registry's answer, on the submission and on the registration (which is the submission's, and in review). */
export async function recordDecision(trx: Knex.Transaction, sub: CnamSubmissionRow, approved: boolean, detail: string | null): Promise<void> {
  const status = approved ? 'approved' : 'rejected';
  await trx('cnam_submissions').where({ id: sub.id }).update({ status, decision_detail: detail, decided_at: trx.fn.now(), modified_at: trx.fn.now() });
  await trx('cnam_registrations')
    .where({ id: sub.registration_id, current_submission_id: sub.id })
    .whereIn('status', ['submitted', 'in_review'])
    .update({ status, status_detail: detail, approved_at: approved ? trx.fn.now() : null, modified_at: trx.fn.now() });
}

/** A technical failure of the adapter, kept on the registration while Temporal retries. */
export async function recordSubmissionError(db: Db, sub: CnamSubmissionRow, message: string): Promise<void> {
  await db('cnam_registrations')
    .where({ id: sub.registration_id, current_submission_id: sub.id })
    .update({ error_message: message.slice(0, 2000), modified_at: db.fn.now() });
}
