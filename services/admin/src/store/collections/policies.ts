/**
 * Collection policies and their steps (admin migration 012). One default policy (segment_id null) per
 * organization and one policy per segment (partial unique indexes); steps in offset order, 0-based
 * `step_index`, offsets unique per policy. Segments and templates a step uses are RESTRICT references.
 */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export type StepChannel = 'email' | 'sms' | 'task';

export interface PolicyStepRow {
  policy_id: string;
  step_index: number;
  offset_days: number;
  channel: StepChannel;
  email_template_id: string | null;
  sms_template_id: string | null;
  /** numeric(20,2) as pg returns it: a decimal string, or null */
  min_overdue_lc: string | null;
}

export interface PolicyRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  segment_id: string | null;
  is_enabled: boolean;
  created_at: Date;
  modified_at: Date;
}

export interface Policy extends PolicyRow {
  steps: PolicyStepRow[];
}

export interface StepInput {
  offset_days: number;
  channel: StepChannel;
  email_template_id: string | null;
  sms_template_id: string | null;
  min_overdue_lc: string | null;
}

/**
 * What a write ran into: a second default policy, a second policy of one segment, or a segment or
 * template deleted between the caller's reference check and the write (foreign key).
 */
export type PolicyClash = 'default' | 'segment' | 'reference_gone';

const CLASHES: Record<string, PolicyClash> = { collection_policies_one_default: 'default', collection_policies_one_per_segment: 'segment' };
const clashOf = (e: unknown): PolicyClash | undefined => {
  const code = (e as { code?: string }).code;
  if (code === '23503') return 'reference_gone';
  return code === '23505' ? CLASHES[(e as { constraint?: string }).constraint ?? ''] : undefined;
};

async function withSteps(db: Q, rows: PolicyRow[]): Promise<Policy[]> {
  if (!rows.length) return [];
  const steps = (await db('collection_policy_steps')
    .whereIn('policy_id', rows.map((r) => r.id))
    .orderBy('policy_id')
    .orderBy('step_index')) as PolicyStepRow[];
  return rows.map((r) => ({ ...r, steps: steps.filter((s) => s.policy_id === r.id) }));
}

/** Writes the steps in offset order (step_index 0..n-1); the caller removed the previous ones. */
async function insertSteps(trx: Knex.Transaction, organizationId: string, policyId: string, steps: StepInput[]): Promise<void> {
  const sorted = [...steps].sort((a, b) => a.offset_days - b.offset_days);
  if (!sorted.length) return;
  await trx('collection_policy_steps').insert(
    sorted.map((s, i) => ({
      policy_id: policyId,
      organization_id: organizationId,
      step_index: i,
      offset_days: s.offset_days,
      channel: s.channel,
      email_template_id: s.email_template_id,
      sms_template_id: s.sms_template_id,
      min_overdue_lc: s.min_overdue_lc,
    })),
  );
}

/** Inserts a policy with its steps in one transaction; the clash when its default/segment slot is taken. */
export async function insertPolicy(
  db: Db,
  organizationId: string,
  p: { name: string; description: string | null; segment_id: string | null; is_enabled: boolean; steps: StepInput[] },
): Promise<Policy | PolicyClash> {
  try {
    return await db.transaction(async (trx) => {
      const [row] = (await trx('collection_policies')
        .insert({ id: newId(), organization_id: organizationId, name: p.name, description: p.description, segment_id: p.segment_id, is_enabled: p.is_enabled })
        .returning('*')) as PolicyRow[];
      await insertSteps(trx, organizationId, row!.id, p.steps);
      return (await withSteps(trx, [row!]))[0]!;
    });
  } catch (e) {
    const clash = clashOf(e);
    if (clash) return clash;
    throw e;
  }
}

export async function getPolicy(db: Q, organizationId: string, id: string): Promise<Policy | undefined> {
  const row = (await db('collection_policies').where({ organization_id: organizationId, id }).first()) as PolicyRow | undefined;
  return row ? (await withSteps(db, [row]))[0] : undefined;
}

/** A page of the organization's policies, oldest first. */
export async function listPolicies(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: Policy[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db('collection_policies').where({ organization_id: organizationId }).orderBy('created_at').orderBy('id').offset(offset).limit(limit) as Promise<PolicyRow[]>,
    db('collection_policies').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: await withSteps(db, rows), total: Number(count) };
}

/**
 * Updates the fields given and, when `steps` is given, replaces the steps wholesale, in one transaction
 * under a lock of the policy row. undefined when unknown; the clash when the new default/segment slot is taken.
 */
export async function updatePolicy(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; description?: string | null; segment_id?: string | null; is_enabled?: boolean; steps?: StepInput[] },
): Promise<Policy | undefined | PolicyClash> {
  try {
    return await db.transaction(async (trx) => {
      const current = await trx('collection_policies').where({ organization_id: organizationId, id }).forUpdate().first();
      if (!current) return undefined;
      const set: Record<string, unknown> = { modified_at: trx.fn.now() };
      for (const k of ['name', 'description', 'segment_id', 'is_enabled'] as const) if (patch[k] !== undefined) set[k] = patch[k];
      const [row] = (await trx('collection_policies').where({ organization_id: organizationId, id }).update(set).returning('*')) as PolicyRow[];
      if (patch.steps) {
        await trx('collection_policy_steps').where({ policy_id: id }).delete();
        await insertSteps(trx, organizationId, id, patch.steps);
      }
      return (await withSteps(trx, [row!]))[0]!;
    });
  } catch (e) {
    const clash = clashOf(e);
    if (clash) return clash;
    throw e;
  }
}

/** Deletes the policy (its steps and step marks cascade; actions keep policy_id null). */
export async function deletePolicy(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (await db('collection_policies').where({ organization_id: organizationId, id }).delete()) > 0;
}

/** How many policies the organization has, and how many of them are enabled (its daily Schedule follows them). */
export async function policyCounts(db: Q, organizationId: string): Promise<{ total: number; enabled: number }> {
  const [row] = (await db('collection_policies')
    .where({ organization_id: organizationId })
    .select(db.raw('count(*)::int AS total'), db.raw('count(*) FILTER (WHERE is_enabled)::int AS enabled'))) as { total: number; enabled: number }[];
  return { total: row?.total ?? 0, enabled: row?.enabled ?? 0 };
}

/** The policy of a segment (a segment has at most one). */
export async function policyOfSegment(db: Q, organizationId: string, segmentId: string): Promise<Pick<PolicyRow, 'id' | 'name'> | undefined> {
  return db('collection_policies').select('id', 'name').where({ organization_id: organizationId, segment_id: segmentId }).first();
}

/** Policies with a step using one of the email templates, or the SMS template (by name, for a 409's detail). */
export async function policiesUsingTemplates(
  db: Q,
  organizationId: string,
  templates: { email?: readonly string[]; sms?: readonly string[] },
): Promise<Pick<PolicyRow, 'id' | 'name'>[]> {
  const email = templates.email ?? [];
  const sms = templates.sms ?? [];
  if (!email.length && !sms.length) return [];
  return db('collection_policies as p')
    .distinct('p.id', 'p.name', 'p.created_at')
    .join('collection_policy_steps as s', 's.policy_id', 'p.id')
    .where('p.organization_id', organizationId)
    .andWhere((w) => {
      if (email.length) void w.orWhereIn('s.email_template_id', [...email]);
      if (sms.length) void w.orWhereIn('s.sms_template_id', [...sms]);
    })
    .orderBy('p.created_at');
}

/** The ids among `ids` that are rows of `table` in the organization (templates and segments a policy may name). */
export async function existingIds(db: Q, table: 'email_templates' | 'sms_templates' | 'customer_segments', organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = (await db(table).select('id').where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)])) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}
