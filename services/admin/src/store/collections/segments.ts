/** Customer segments (admin schema, migrations 006 and 009): priority and name (nameKey) unique per organization, 1 highest. */
import { newId, type Condition, type Db } from '@rp/platform';

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

const CONFLICTS: Record<string, 'priority' | 'name'> = { customer_segments_org_priority_uq: 'priority', customer_segments_org_name_key_uq: 'name' };
const conflictOf = (e: unknown): 'priority' | 'name' | undefined =>
  (e as { code?: string }).code === '23505' ? CONFLICTS[(e as { constraint?: string }).constraint ?? ''] : undefined;

/** Insert a segment; which unique value ('priority' or 'name') is taken on a clash. */
export async function insertSegment(
  db: Db,
  organizationId: string,
  s: { name: string; name_key: string; description: string | null; priority: number; conditions: Condition },
): Promise<SegmentRow | 'priority' | 'name'> {
  try {
    const [row] = (await db('customer_segments')
      .insert({ id: newId(), organization_id: organizationId, name: s.name, name_key: s.name_key, description: s.description, priority: s.priority, conditions: JSON.stringify(s.conditions) })
      .returning('*')) as SegmentRow[];
    return row!;
  } catch (e) {
    const taken = conflictOf(e);
    if (taken) return taken;
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

/** Update the fields given; undefined when unknown, 'priority' or 'name' when the new value is taken. */
export async function updateSegment(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; name_key?: string; description?: string | null; priority?: number; conditions?: Condition },
): Promise<SegmentRow | undefined | 'priority' | 'name'> {
  const set: Record<string, unknown> = { modified_at: db.fn.now() };
  if (patch.name !== undefined) {
    set.name = patch.name;
    set.name_key = patch.name_key;
  }
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.priority !== undefined) set.priority = patch.priority;
  if (patch.conditions !== undefined) set.conditions = JSON.stringify(patch.conditions);
  try {
    const [row] = (await db('customer_segments').where({ organization_id: organizationId, id }).update(set).returning('*')) as SegmentRow[];
    return row;
  } catch (e) {
    const taken = conflictOf(e);
    if (taken) return taken;
    throw e;
  }
}

export async function deleteSegment(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (await db('customer_segments').where({ organization_id: organizationId, id }).delete()) > 0;
}

/** Every segment of the organization with its conditions (the compiled-size bound sums them all). */
export async function segmentConditionsOfOrganization(db: Db, organizationId: string): Promise<Pick<SegmentRow, 'id' | 'name' | 'priority' | 'conditions'>[]> {
  return db<SegmentRow>('customer_segments').select('id', 'name', 'priority', 'conditions').where({ organization_id: organizationId }).orderBy('priority');
}

/** The conditions of the organization's segments of higher priority (smaller number) than `priority`. */
export async function higherPrioritySegmentConditions(db: Db, organizationId: string, priority: number): Promise<Condition[]> {
  const rows = await db<SegmentRow>('customer_segments').select('conditions').where({ organization_id: organizationId }).andWhere('priority', '<', priority).orderBy('priority');
  return rows.map((r) => r.conditions);
}
