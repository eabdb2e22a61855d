/**
 * Admin-owned reads other services need for the partners API and extraction (tags, segments and
 * their conditions, users as references): read-only here, admin writes those tables.
 */
import type { Knex } from 'knex';
import { ValidationError } from '../errors.js';
import { SEGMENTS_TABLE, TAGS_TABLE, USERS_TABLE, type Condition, type Path } from './language.js';
import { type ResolvedTag } from './tags.js';

/** Every tag of the organization (id, name, color, rule), by name (read-only; admin owns them). */
export async function organizationTags(db: Knex, organizationId: string): Promise<(ResolvedTag & { name: string; color: string })[]> {
  return db(TAGS_TABLE).select('id', 'name', 'color', 'rule_condition').where({ organization_id: organizationId }).orderByRaw('lower(name), id');
}

/** A customer segment's conditions and priority (read-only; admin owns segments). Null when unknown. */
export async function segmentConditions(db: Knex, organizationId: string, segmentId: string): Promise<{ id: string; priority: number; conditions: Condition } | null> {
  const row = await db(SEGMENTS_TABLE).select('id', 'priority', 'conditions').where({ organization_id: organizationId, id: segmentId }).first();
  return (row as { id: string; priority: number; conditions: Condition } | undefined) ?? null;
}

/** The organization's segments by id and name (read-only; admin owns segments): what knowledge links memories to. */
export async function segmentNames(db: Knex, organizationId: string): Promise<{ id: string; name: string }[]> {
  return db(SEGMENTS_TABLE).select('id', 'name').where({ organization_id: organizationId }).orderBy('id');
}

/**
 * A body's reference to a user (`id` at `loc`): 422 unless it is an active (not deactivated) user of
 * the organization, exactly as for a random id (admin owns users; read-only here).
 */
export async function checkUserReference(db: Knex, organizationId: string, id: string, loc: Path): Promise<void> {
  const row = await db(USERS_TABLE).select('id').where({ organization_id: organizationId, id }).whereNull('deactivated_at').first();
  if (!row) throw new ValidationError([{ loc, msg: 'is not an active user of this organization', type: 'value_error.not_found' }]);
}
