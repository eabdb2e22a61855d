/** Tags and the partners tagged by hand (admin schema, migrations 006 and 009). */
import { newId, type Condition, type Db } from '@rp/platform';

export interface TagRow {
  id: string;
  organization_id: string;
  name: string;
  color: string;
  rule_condition: Condition | null;
  created_at: Date;
  modified_at: Date;
}

const UNIQUE_NAME = 'tags_org_name_key_uq';
const isUniqueViolation = (e: unknown) => (e as { code?: string; constraint?: string }).code === '23505' && (e as { constraint?: string }).constraint === UNIQUE_NAME;

/** Insert a tag; null when the organization already has a tag of that name (same nameKey). */
export async function insertTag(db: Db, organizationId: string, t: { name: string; name_key: string; color: string; rule_condition: Condition | null }): Promise<TagRow | null> {
  const res = await db.raw(
    `INSERT INTO tags (id, organization_id, name, name_key, color, rule_condition) VALUES (?, ?, ?, ?, ?, ?::jsonb)
     ON CONFLICT (organization_id, name_key) DO NOTHING RETURNING *`,
    [newId(), organizationId, t.name, t.name_key, t.color, t.rule_condition === null ? null : JSON.stringify(t.rule_condition)],
  );
  return (res.rows[0] as TagRow | undefined) ?? null;
}

export async function getTag(db: Db, organizationId: string, id: string): Promise<TagRow | undefined> {
  return db<TagRow>('tags').where({ organization_id: organizationId, id }).first();
}

export async function listTags(db: Db, organizationId: string, offset: number, limit: number): Promise<{ rows: TagRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db<TagRow>('tags').where({ organization_id: organizationId }).orderByRaw('lower(name), id').offset(offset).limit(limit),
    db('tags').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as TagRow[], total: Number(count) };
}

/** Update the fields given; undefined when unknown, 'conflict' on a duplicate name. */
export async function updateTag(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; name_key?: string; color?: string; rule_condition?: Condition | null },
): Promise<TagRow | undefined | 'conflict'> {
  const set: Record<string, unknown> = { modified_at: db.fn.now() };
  if (patch.name !== undefined) {
    set.name = patch.name;
    set.name_key = patch.name_key;
  }
  if (patch.color !== undefined) set.color = patch.color;
  if (patch.rule_condition !== undefined) set.rule_condition = patch.rule_condition === null ? null : JSON.stringify(patch.rule_condition);
  try {
    const [row] = (await db('tags').where({ organization_id: organizationId, id }).update(set).returning('*')) as TagRow[];
    return row;
  } catch (e) {
    if (isUniqueViolation(e)) return 'conflict';
    throw e;
  }
}

/** Delete a tag (its hand-tagged links go with it); false when unknown. */
export async function deleteTag(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (await db('tags').where({ organization_id: organizationId, id }).delete()) > 0;
}

export async function addTagPartners(db: Db, organizationId: string, tagId: string, partnerIds: readonly string[]): Promise<void> {
  if (!partnerIds.length) return;
  await db('tag_partners')
    .insert([...new Set(partnerIds)].map((partner_id) => ({ tag_id: tagId, partner_id, organization_id: organizationId })))
    .onConflict(['tag_id', 'partner_id'])
    .ignore();
}

export async function removeTagPartners(db: Db, organizationId: string, tagId: string, partnerIds: readonly string[]): Promise<number> {
  if (!partnerIds.length) return 0;
  return db('tag_partners').where({ organization_id: organizationId, tag_id: tagId }).whereIn('partner_id', [...new Set(partnerIds)]).delete();
}
