/**
 * Customer segments: CRUD over admin's store, and the partners a segment matches, read from the
 * ledger through the kernel's condition compiler (one statement; integrations owns partners).
 */
import {
  checkTagReferences,
  ConflictError,
  higherPrioritySegmentConditions,
  listPartnersMatching,
  NotFoundError,
  partnerSummaryView,
  type Condition,
  type Db,
  type Identity,
} from '@rp/platform';
import { deleteSegment, getSegment, insertSegment, segmentView, updateSegment } from '../../store/collections/segments.js';

const taken = (priority: number) => new ConflictError(`Another customer segment of this organization has priority ${priority}; priorities are unique.`);

export async function createSegment(db: Db, identity: Identity, body: { name: string; description?: string | null; priority: number; conditions: Record<string, unknown> }) {
  const conditions = body.conditions as unknown as Condition;
  await checkTagReferences(db, identity.org, conditions, ['body', 'conditions']);
  const row = await insertSegment(db, identity.org, { name: body.name, description: body.description ?? null, priority: body.priority, conditions });
  if (row === 'conflict') throw taken(body.priority);
  return segmentView(row);
}

export async function patchSegment(
  db: Db,
  identity: Identity,
  id: string,
  body: { name?: string; description?: string | null; priority?: number; conditions?: Record<string, unknown> },
) {
  const conditions = body.conditions as unknown as Condition | undefined;
  if (!(await getSegment(db, identity.org, id))) throw new NotFoundError(`No customer segment ${id}.`);
  if (conditions) await checkTagReferences(db, identity.org, conditions, ['body', 'conditions']);
  const row = await updateSegment(db, identity.org, id, { ...body, conditions });
  if (row === 'conflict') throw taken(body.priority!);
  if (!row) throw new NotFoundError(`No customer segment ${id}.`);
  return segmentView(row);
}

export async function segmentOrThrow(db: Db, identity: Identity, id: string) {
  const row = await getSegment(db, identity.org, id);
  if (!row) throw new NotFoundError(`No customer segment ${id}.`);
  return row;
}

export async function removeSegment(db: Db, identity: Identity, id: string): Promise<void> {
  if (!(await deleteSegment(db, identity.org, id))) throw new NotFoundError(`No customer segment ${id}.`);
}

/** Row 14: the segment's partners in the caller's scope, by name then id; optionally without those of higher-priority segments. */
export async function segmentPartners(db: Db, identity: Identity, id: string, page: { offset: number; pageSize: number }, excludeHigherPriority: boolean) {
  const segment = await segmentOrThrow(db, identity, id);
  const exclude = excludeHigherPriority ? await higherPrioritySegmentConditions(db, identity.org, segment.priority) : [];
  const { rows } = await listPartnersMatching(db, identity.org, { condition: segment.conditions, exclude, scope: identity.bu, offset: page.offset, limit: page.pageSize });
  return rows.map(partnerSummaryView);
}
