/**
 * The partners API over integrations' own ledger, with the kernel condition compiler:
 * the list filters become one condition tree (name contains, business unit, assignee, tag, a
 * segment's conditions) evaluated in one statement. Tags and segments are admin's; they are read
 * through the kernel read module (admin.tags / admin.customer_segments, read-only), exactly as
 * business units and users are (ledger.ts), so integrations never writes or owns them.
 *
 * Out-of-office coverage (admin's `coverage_today`, read through the kernel's coverage.ts): every
 * partner answered carries `effective_assignee_id` (the assignee, or the assignee's backup while the
 * assignee is out today in the organization's timezone); the `assignee_id` filter stays literal and
 * `handled_by` filters on the effective assignee.
 */
import {
  assigneesHandledToday,
  checkBusinessUnitReferences,
  checkTagReferences,
  checkUserReference,
  effectiveAssignees,
  getPartner,
  listPartnersMatching,
  NotFoundError,
  organizationTags,
  partnerDetailRow,
  partnerSummaryView,
  segmentConditions,
  ValidationError,
  type Condition,
  type Db,
  type Identity,
} from '@rp/platform';
import { updatePartnerAssignment } from '../store/partners.js';
import { partnerViewRows } from '../store/ledger-views.js';
import { recordPartnerChanges } from './ledger-events.js';
import { partnerReadKey, type PartnerReads } from './partner-reads.js';

export interface PartnerFilters {
  name?: string;
  tag?: string;
  segment_id?: string;
  business_unit_id?: string;
  assignee_id?: string;
  /** effective assignee today: the assignee unless out of office, or the backup covering them */
  handled_by?: string;
}

export async function listPartners({ db }: { db: Db }, identity: Identity, f: PartnerFilters, page: { offset: number; pageSize: number }) {
  const leaves: Condition[] = [];
  if (f.name !== undefined) leaves.push({ field: 'name', op: 'contains', value: f.name });
  if (f.business_unit_id !== undefined) leaves.push({ field: 'business_unit_id', op: 'eq', value: f.business_unit_id });
  if (f.assignee_id !== undefined) leaves.push({ field: 'assignee_id', op: 'eq', value: f.assignee_id });
  // "what do I handle today": customers whose effective assignee is the user (admin's coverage, through the kernel)
  if (f.handled_by !== undefined) leaves.push({ field: 'assignee_id', op: 'in', value: await assigneesHandledToday(db, identity.org, f.handled_by) });
  if (f.tag !== undefined) {
    const leaf: Condition = { field: 'tag', op: 'eq', value: f.tag };
    await checkTagReferences(db, identity.org, leaf, ['query', 'tag']).catch((e: unknown) => {
      if (e instanceof ValidationError) throw new ValidationError([{ loc: ['query', 'tag'], msg: 'is not a tag of this organization', type: 'value_error.not_found' }]);
      throw e;
    });
    leaves.push(leaf);
  }
  if (f.segment_id !== undefined) {
    const segment = await segmentConditions(db, identity.org, f.segment_id);
    if (!segment) throw new ValidationError([{ loc: ['query', 'segment_id'], msg: 'is not a customer segment of this organization', type: 'value_error.not_found' }]);
    leaves.push(segment.conditions);
  }
  const { rows, total } = await listPartnersMatching(db, identity.org, {
    condition: leaves.length ? { all: leaves } : null,
    scope: identity.bu,
    offset: page.offset,
    limit: page.pageSize,
    withTotal: true,
  });
  return { rows: await effectiveAssignees(db, identity.org, rows.map(partnerSummaryView)), total };
}

/** The partner's detail, from this process's cache when it holds one for the caller's scope (domain/partner-reads.ts). */
export async function partnerDetail(deps: { db: Db; partnerReads?: PartnerReads | null }, identity: Identity, id: string): Promise<PartnerDetail> {
  const cache = deps.partnerReads ?? null;
  if (!cache) return readPartnerDetail(deps.db, identity, id);
  return cache.through(partnerReadKey(identity.org, id, identity.bu), () => readPartnerDetail(deps.db, identity, id));
}

export type PartnerDetail = Awaited<ReturnType<typeof readPartnerDetail>>;

/** The organization's tags (their rules compile into the statement), then the partner in one statement. */
async function readPartnerDetail(db: Db, identity: Identity, id: string) {
  const tags = await organizationTags(db, identity.org);
  const row = await partnerDetailRow(db, identity.org, id, identity.bu, tags);
  if (!row) throw new NotFoundError(`No partner ${id}.`);
  const carried = new Set(row.tagIds);
  return {
    ...partnerSummaryView(row.partner),
    effective_assignee_id: row.effective_assignee_id,
    ...row.figures,
    tags: tags.filter((t) => carried.has(t.id)).map((t) => ({ id: t.id, name: t.name, color: t.color })),
  };
}

/**
 * Assign a partner: `assignee_id` must be an active user of the organization, `business_unit_id`
 * a unit of it (and, for a member, one of theirs); null clears either. 404 for a partner outside
 * the caller's units.
 */
export async function assignPartner({ db }: { db: Db }, identity: Identity, id: string, body: { assignee_id?: string | null; business_unit_id?: string | null }) {
  const partner = await getPartner(db, identity.org, id, identity.bu);
  if (!partner) throw new NotFoundError(`No partner ${id}.`);
  if (body.assignee_id) await checkUserReference(db, identity.org, body.assignee_id, ['body', 'assignee_id']);
  if (body.business_unit_id) {
    await checkBusinessUnitReferences(db, identity.org, identity.bu, [body.business_unit_id], ['body', 'business_unit_id']).catch((e: unknown) => {
      if (e instanceof ValidationError) throw new ValidationError([{ loc: ['body', 'business_unit_id'], msg: 'is not a business unit of this organization', type: 'value_error.not_found' }]);
      throw e;
    });
  }
  // The assignment and its partner.updated (when it changed anything) commit together.
  await db.transaction(async (trx) => {
    const before = await partnerViewRows(trx, identity.org, [id], true);
    if (!(await updatePartnerAssignment(trx, identity.org, id, body))) throw new NotFoundError(`No partner ${id}.`);
    await recordPartnerChanges(trx, identity.org, before, [id]);
  });
  // read past the cache: the entries this change makes stale are dropped only once the route has answered
  return readPartnerDetail(db, identity, id);
}
