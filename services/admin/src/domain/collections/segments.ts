/**
 * Customer segments: CRUD over admin's store, and the partners a segment matches, read from the
 * ledger through the kernel's condition compiler (one statement; integrations owns partners).
 *
 * Compiled size: with `exclude_higher_priority` a segment's statement compiles the segment and every
 * segment of higher priority, so the lowest segment's statement compiles all of them. Writes keep the
 * organization's segments together within MAX_COMPILED_NODES after tag expansion (compiledSize): a
 * segment write past it is 422 at `conditions`, a tag rule write past it is 422 at `rule_condition`
 * (see tags.ts). Two concurrent writes can still cross it together; a read then answers 409 naming
 * the segment instead of running the statement.
 */
import {
  checkConditionReferences,
  compiledSize,
  ConflictError,
  listPartnersMatching,
  MAX_COMPILED_NODES,
  NotFoundError,
  partnerSummaryView,
  resolveTags,
  tagIdsOf,
  ValidationError,
  type Condition,
  type Db,
  type Identity,
  type ResolvedTag,
} from '@rp/platform';
import { deleteSegment, getSegment, higherPrioritySegmentConditions, insertSegment, listSegments, segmentConditionsOfOrganization, updateSegment, type SegmentRow } from '../../store/collections/segments.js';
import { nameKey } from './names.js';
import { refusedWhileUsedByPolicy } from './policies.js';

const taken = (what: 'priority' | 'name', body: { name?: string; priority?: number }) =>
  what === 'priority'
    ? new ConflictError(`Another customer segment of this organization has priority ${body.priority}; priorities are unique.`)
    : new ConflictError(`A customer segment named "${body.name}" (or a name that differs only in case, width or invisible characters) already exists in this organization.`);

export interface SegmentSizes {
  total: number;
  segments: { id: string | null; name: string; size: number }[];
}

/**
 * The compiled size of the organization's segments, with `replace` standing for the segment of that
 * id (or a new one when id is null) and `tagRules` overriding stored tag rules (a tag write not yet made).
 */
export async function organizationSegmentSizes(
  db: Db,
  organizationId: string,
  opts: { replace?: { id: string | null; name: string; conditions: Condition }; tagRules?: Map<string, Condition | null> } = {},
): Promise<SegmentSizes> {
  const stored = await segmentConditionsOfOrganization(db, organizationId);
  const list: { id: string | null; name: string; conditions: Condition }[] = stored.filter((s) => s.id !== opts.replace?.id);
  if (opts.replace) list.push(opts.replace);
  const tags = await resolveTags(db, organizationId, tagIdsOf(...list.map((s) => s.conditions)));
  for (const [id, rule] of opts.tagRules ?? []) tags.set(id, { id, rule_condition: rule } satisfies ResolvedTag);
  const segments = list.map((s) => ({ id: s.id, name: s.name, size: compiledSize(s.conditions, tags) }));
  return { total: segments.reduce((n, s) => n + s.size, 0), segments };
}

async function checkSize(db: Db, organizationId: string, segment: { id: string | null; name: string; conditions: Condition }): Promise<void> {
  const sizes = await organizationSegmentSizes(db, organizationId, { replace: segment });
  if (sizes.total <= MAX_COMPILED_NODES) return;
  const own = sizes.segments.find((s) => s.id === segment.id)!.size;
  throw new ValidationError([
    {
      loc: ['body', 'conditions'],
      msg:
        `expands through its tags to ${own} nodes; with the organization's other segments that makes ${sizes.total}, more than the ` +
        `${MAX_COMPILED_NODES} a segment query may compile (exclude_higher_priority compiles every higher segment)`,
      type: 'value_error.condition_size',
    },
  ]);
}

export async function createSegment({ db }: { db: Db }, identity: Identity, body: { name: string; description?: string | null; priority: number; conditions: Record<string, unknown> }) {
  const conditions = body.conditions as unknown as Condition;
  await checkConditionReferences(db, identity.org, conditions, ['body', 'conditions']);
  await checkSize(db, identity.org, { id: null, name: body.name, conditions });
  const row = await insertSegment(db, identity.org, { name: body.name, name_key: nameKey(body.name), description: body.description ?? null, priority: body.priority, conditions });
  if (typeof row === 'string') throw taken(row, body);
  return row;
}

export async function patchSegment(
  { db }: { db: Db },
  identity: Identity,
  id: string,
  body: { name?: string; description?: string | null; priority?: number; conditions?: Record<string, unknown> },
) {
  const conditions = body.conditions as unknown as Condition | undefined;
  const current = await getSegment(db, identity.org, id);
  if (!current) throw new NotFoundError(`No customer segment ${id}.`);
  if (conditions) {
    await checkConditionReferences(db, identity.org, conditions, ['body', 'conditions']);
    await checkSize(db, identity.org, { id, name: body.name ?? current.name, conditions });
  }
  const row = await updateSegment(db, identity.org, id, { ...body, name_key: body.name === undefined ? undefined : nameKey(body.name), conditions });
  if (typeof row === 'string') throw taken(row, body);
  if (!row) throw new NotFoundError(`No customer segment ${id}.`);
  return row;
}

/** A page of the organization's segments, by priority. */
export async function segmentsOf({ db }: { db: Db }, organizationId: string, page: { offset: number; pageSize: number }) {
  return listSegments(db, organizationId, page.offset, page.pageSize);
}

export async function segmentOrThrow({ db }: { db: Db }, identity: Identity, id: string) {
  const row = await getSegment(db, identity.org, id);
  if (!row) throw new NotFoundError(`No customer segment ${id}.`);
  return row;
}

/** Deletes a segment; one a collection policy targets is refused (409 naming the policy; the foreign key decides, so a concurrent policy write cannot slip past). */
export async function removeSegment({ db }: { db: Db }, identity: Identity, id: string): Promise<void> {
  const deleted = await refusedWhileUsedByPolicy(db, identity.org, `Customer segment ${id}`, async () => ({ segment: id }), () => deleteSegment(db, identity.org, id));
  if (!deleted) throw new NotFoundError(`No customer segment ${id}.`);
}

/** 409 naming the segment when its statement (with `exclude`) would compile past the bound, e.g. after a tag grew. */
async function checkReadSize(db: Db, organizationId: string, segment: SegmentRow, exclude: Condition[]): Promise<void> {
  const tags = await resolveTags(db, organizationId, tagIdsOf(segment.conditions, ...exclude));
  const size = [segment.conditions, ...exclude].reduce((n, c) => n + compiledSize(c, tags), 0);
  if (size <= MAX_COMPILED_NODES) return;
  throw new ConflictError(
    `Customer segment "${segment.name}" (${segment.id}) expands through its tags${exclude.length ? ' and the higher-priority segments' : ''} to ${size} nodes, ` +
      `more than the ${MAX_COMPILED_NODES} one query may compile; simplify its conditions or the rules of the tags it uses.`,
  );
}

/** Row 14: the segment's partners in the caller's scope, by name then id; optionally without those of higher-priority segments. */
export async function segmentPartners({ db }: { db: Db }, identity: Identity, id: string, page: { offset: number; pageSize: number }, excludeHigherPriority: boolean) {
  const segment = await segmentOrThrow({ db }, identity, id);
  const exclude = excludeHigherPriority ? await higherPrioritySegmentConditions(db, identity.org, segment.priority) : [];
  await checkReadSize(db, identity.org, segment, exclude);
  const { rows } = await listPartnersMatching(db, identity.org, { condition: segment.conditions, exclude, scope: identity.bu, offset: page.offset, limit: page.pageSize });
  return rows.map(partnerSummaryView);
}
