/** Customer segments (admin schema, migration 006): priority unique per organization, 1 highest. */
import { isoTime, newId, type Condition, type Db } from '@rp/platform';

export interface SegmentRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  priority: number;
  conditions: Condition;
  created_at: Date;
  modified_at: Date;
}

export function segmentView(r: SegmentRow) {
  return {
    object: 'customer_segment' as const,
    id: r.id,
    name: r.name,
    description: r.description,
    priority: r.priority,
    conditions: r.conditions as Record<string, unknown>,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}

const isPriorityTaken = (e: unknown) =>
  (e as { code?: string }).code === '23505' && (e as { constraint?: string }).constraint === 'customer_segments_org_priority_uq';

/** Insert a segment; 'conflict' when its priority is taken. */
export async function insertSegment(
  db: Db,
  organizationId: string,
  s: { name: string; description: string | null; priority: number; conditions: Condition },
): Promise<SegmentRow | 'conflict'> {
  try {
    const [row] = (await db('customer_segments')
      .insert({ id: newId(), organization_id: organizationId, name: s.name, description: s.description, priority: s.priority, conditions: JSON.stringify(s.conditions) })
      .returning('*')) as SegmentRow[];
    return row!;
  } catch (e) {
    if (isPriorityTaken(e)) return 'conflict';
    throw e;
  }
}

export async function getSegment(db: Db, organizationId: string, id: string): Promise<SegmentRow | undefined> {
  return db<SegmentRow>('customer_segments').where({ organization_id: organizationId, id }).first();
}

export async function listSegments(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: SegmentRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db<SegmentRow>('customer_segments').where({ organization_id: organizationId }).orderBy('priority').orderBy('id').offset(offset).limit(limit),
    db('customer_segments').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as SegmentRow[], total: Number(count) };
}

/** Update the fields given; undefined when unknown, 'conflict' when the new priority is taken. */
export async function updateSegment(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; description?: string | null; priority?: number; conditions?: Condition },
): Promise<SegmentRow | undefined | 'conflict'> {
  const set: Record<string, unknown> = { modified_at: db.fn.now() };
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.priority !== undefined) set.priority = patch.priority;
  if (patch.conditions !== undefined) set.conditions = JSON.stringify(patch.conditions);
  try {
    const [row] = (await db('customer_segments').where({ organization_id: organizationId, id }).update(set).returning('*')) as SegmentRow[];
    return row;
  } catch (e) {
    if (isPriorityTaken(e)) return 'conflict';
    throw e;
  }
}

export async function deleteSegment(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (await db('customer_segments').where({ organization_id: organizationId, id }).delete()) > 0;
}
