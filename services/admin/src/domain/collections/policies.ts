/**
 * Collection policies (which customers get which steps): CRUD with the references a step names checked
 * against the organization (422 at the step's loc), the one-default / one-per-segment rules (409), and
 * the organization's daily run Schedule kept in step with them (collections-schedule.ts): every
 * committed change of a policy starts the organization's Schedule reconcile.
 */
import { ConflictError, NotFoundError, ValidationError, type Db, type Identity, type ValidationIssue } from '@rp/platform';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import * as store from '../../store/collections/policies.js';
import { requestCollectionsScheduleReconcile } from './collections-schedule.js';

export interface PolicyDeps {
  db: Db;
  temporal: Client;
  log?: Logger;
}

export interface PolicyInput {
  name: string;
  description?: string | null;
  segment_id: string | null;
  is_enabled: boolean;
  steps: store.StepInput[];
}

export type PolicyPatch = Partial<PolicyInput>;

/** 422 at each reference the organization does not hold: the segment, and each step's template. */
async function checkReferences(db: Db, organizationId: string, body: { segment_id?: string | null; steps?: store.StepInput[] }): Promise<void> {
  const steps = body.steps ?? [];
  const [segments, email, sms] = await Promise.all([
    store.existingIds(db, 'customer_segments', organizationId, body.segment_id ? [body.segment_id] : []),
    store.existingIds(db, 'email_templates', organizationId, steps.flatMap((s) => (s.email_template_id ? [s.email_template_id] : []))),
    store.existingIds(db, 'sms_templates', organizationId, steps.flatMap((s) => (s.sms_template_id ? [s.sms_template_id] : []))),
  ]);
  const issues: ValidationIssue[] = [];
  if (body.segment_id && !segments.has(body.segment_id)) {
    issues.push({ loc: ['body', 'segment_id'], msg: 'must name a customer segment of this organization', type: 'value_error.reference' });
  }
  steps.forEach((s, i) => {
    if (s.email_template_id && !email.has(s.email_template_id)) {
      issues.push({ loc: ['body', 'steps', i, 'email_template_id'], msg: 'must name an email template of this organization', type: 'value_error.reference' });
    }
    if (s.sms_template_id && !sms.has(s.sms_template_id)) {
      issues.push({ loc: ['body', 'steps', i, 'sms_template_id'], msg: 'must name an SMS template of this organization', type: 'value_error.reference' });
    }
  });
  if (issues.length) throw new ValidationError(issues);
}

function clashError(clash: 'default' | 'segment', segmentId: string | null | undefined): ConflictError {
  return clash === 'default'
    ? new ConflictError('This organization already has a default collection policy (segment_id null); there is at most one. Change or delete it first.')
    : new ConflictError(`Customer segment ${segmentId} already has a collection policy; a segment has at most one. Change or delete it first.`);
}

/** After a committed change: the Schedule follows from the committed state; Temporal away does not undo the change. */
async function scheduleFollows(deps: PolicyDeps, organizationId: string): Promise<void> {
  await requestCollectionsScheduleReconcile(deps, organizationId);
}

export async function createPolicy(deps: PolicyDeps, identity: Identity, body: PolicyInput): Promise<store.Policy> {
  await checkReferences(deps.db, identity.org, body);
  const input = { ...body, description: body.description ?? null };
  let row = await store.insertPolicy(deps.db, identity.org, input);
  // a segment or template deleted after the check: the check now names it (422)
  if (row === 'reference_gone') {
    await checkReferences(deps.db, identity.org, body);
    row = await store.insertPolicy(deps.db, identity.org, input);
  }
  if (row === 'reference_gone') throw new ConflictError('A segment or template this policy names was deleted while it was being saved; try again.');
  if (typeof row === 'string') throw clashError(row, body.segment_id);
  await scheduleFollows(deps, identity.org);
  return row;
}

export async function patchPolicy(deps: PolicyDeps, identity: Identity, id: string, body: PolicyPatch): Promise<store.Policy> {
  if (!(await store.getPolicy(deps.db, identity.org, id))) throw new NotFoundError(`No collection policy ${id}.`);
  await checkReferences(deps.db, identity.org, body);
  let row = await store.updatePolicy(deps.db, identity.org, id, body);
  if (row === 'reference_gone') {
    await checkReferences(deps.db, identity.org, body);
    row = await store.updatePolicy(deps.db, identity.org, id, body);
  }
  if (row === 'reference_gone') throw new ConflictError('A segment or template this policy names was deleted while it was being saved; try again.');
  if (typeof row === 'string') throw clashError(row, body.segment_id);
  if (!row) throw new NotFoundError(`No collection policy ${id}.`);
  await scheduleFollows(deps, identity.org);
  return row;
}

export async function policiesOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return store.listPolicies(db, organizationId, page.offset, page.pageSize);
}

export async function policyOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<store.Policy> {
  const row = await store.getPolicy(db, identity.org, id);
  if (!row) throw new NotFoundError(`No collection policy ${id}.`);
  return row;
}

export async function removePolicy(deps: PolicyDeps, identity: Identity, id: string): Promise<void> {
  if (!(await store.deletePolicy(deps.db, identity.org, id))) throw new NotFoundError(`No collection policy ${id}.`);
  await scheduleFollows(deps, identity.org);
}

/** The 409 of deleting something a policy uses: names the first policy (and how many more). */
function usedByPolicies(what: string, policies: { id: string; name: string }[]): ConflictError {
  const [first] = policies;
  if (!first) return new ConflictError(`${what} is used by a collection policy; change or delete the policy first.`);
  const more = policies.length > 1 ? ` and ${policies.length - 1} more` : '';
  return new ConflictError(`${what} is used by collection policy "${first.name}" (${first.id})${more}; change or delete the policy first.`);
}

const isForeignKeyViolation = (e: unknown) => (e as { code?: string }).code === '23503';

/**
 * Runs a delete of something collection policies may reference (RESTRICT foreign keys): a refusal by one of
 * those keys becomes a 409 naming the policy that holds it (looked up after the rollback); other errors pass.
 */
export async function refusedWhileUsedByPolicy<T>(
  db: Db,
  organizationId: string,
  what: string,
  uses: () => Promise<{ segment?: string; email?: readonly string[]; sms?: readonly string[] }>,
  remove: () => Promise<T>,
): Promise<T> {
  try {
    return await remove();
  } catch (e) {
    if (!isForeignKeyViolation(e)) throw e;
    const { segment, email, sms } = await uses();
    const holders = segment ? [await store.policyOfSegment(db, organizationId, segment)].filter((p) => p !== undefined) : [];
    holders.push(...(await store.policiesUsingTemplates(db, organizationId, { email, sms })));
    throw usedByPolicies(what, holders);
  }
}
