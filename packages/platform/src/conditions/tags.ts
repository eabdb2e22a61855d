/**
 * Tags inside conditions: a `tag` leaf names a tag of admin's schema whose rule is loaded first
 * (resolveTags) and inlined by the compiler; the compiled size after that expansion is bounded; ids
 * inside conditions (tags, business units, assignees) must be the organization's.
 */
import type { Knex } from 'knex';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { BUSINESS_UNITS_TABLE } from '../ledger/index.js';
import { TAGS_TABLE, USERS_TABLE, type Condition, type ConditionField, type Path } from './language.js';

export interface ResolvedTag {
  id: string;
  rule_condition: Condition | null;
}

/** Every tag id referred to by `tag` leaves of the conditions. */
export function tagIdsOf(...conditions: (Condition | null | undefined)[]): string[] {
  const ids = new Set<string>();
  const walk = (c: Condition): void => {
    if ('all' in c) c.all.forEach(walk);
    else if ('any' in c) c.any.forEach(walk);
    else if ('not' in c) walk(c.not);
    else if (c.field === 'tag') (Array.isArray(c.value) ? c.value : [c.value]).forEach((v) => ids.add(String(v).toLowerCase()));
  };
  conditions.forEach((c) => c && walk(c));
  return [...ids];
}

/** The organization's tags among `ids` with their rules (read-only; admin owns them). */
export async function resolveTags(db: Knex, organizationId: string, ids: readonly string[]): Promise<Map<string, ResolvedTag>> {
  if (ids.length === 0) return new Map();
  const rows = (await db(TAGS_TABLE).select('id', 'rule_condition').where({ organization_id: organizationId }).whereIn('id', [...ids])) as ResolvedTag[];
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * Nodes `c` compiles to once its `tag` leaves are expanded: every node counts 1, and a `tag` leaf adds,
 * per tag id it names, 1 (the hand-tagged test) plus its tag's rule. Unknown tags compile to `false`.
 */
export function compiledSize(c: Condition, tags: Map<string, ResolvedTag>): number {
  if ('all' in c) return c.all.reduce((n, x) => n + compiledSize(x, tags), 1);
  if ('any' in c) return c.any.reduce((n, x) => n + compiledSize(x, tags), 1);
  if ('not' in c) return 1 + compiledSize(c.not, tags);
  if (c.field !== 'tag') return 1;
  let n = 1;
  for (const id of Array.isArray(c.value) ? c.value : [c.value]) {
    const rule = tags.get(String(id).toLowerCase())?.rule_condition;
    n += 1 + (rule ? compiledSize(rule, tags) : 0);
  }
  return n;
}

/**
 * 422 naming each leaf (by its loc under `base`) that refers to something not of the organization:
 * a `tag` value that is not one of its tags, a `business_unit_id` that is not one of its business
 * units, an `assignee_id` that is not one of its users (a deactivated user still counts: partners
 * may remain assigned to one). Null values (`eq`/`ne` null) refer to nothing.
 */
export async function checkConditionReferences(db: Knex, organizationId: string, condition: Condition, base: Path): Promise<void> {
  const refs: { table: string; field: ConditionField; msg: string }[] = [
    { table: TAGS_TABLE, field: 'tag', msg: 'is not a tag of this organization' },
    { table: BUSINESS_UNITS_TABLE, field: 'business_unit_id', msg: 'is not a business unit of this organization' },
    { table: USERS_TABLE, field: 'assignee_id', msg: 'is not a user of this organization' },
  ];
  const issues: ValidationIssue[] = [];
  for (const ref of refs) {
    const leaves: { loc: Path; id: string }[] = [];
    const walk = (c: Condition, path: Path): void => {
      if ('all' in c) c.all.forEach((x, i) => walk(x, [...path, 'all', i]));
      else if ('any' in c) c.any.forEach((x, i) => walk(x, [...path, 'any', i]));
      else if ('not' in c) walk(c.not, [...path, 'not']);
      else if (c.field === ref.field) {
        if (Array.isArray(c.value)) c.value.forEach((v, i) => typeof v === 'string' && leaves.push({ loc: [...path, 'value', i], id: v.toLowerCase() }));
        else if (typeof c.value === 'string') leaves.push({ loc: [...path, 'value'], id: c.value.toLowerCase() });
      }
    };
    walk(condition, base);
    if (!leaves.length) continue;
    const ids = [...new Set(leaves.map((l) => l.id))];
    const found = new Set(((await db(ref.table).where({ organization_id: organizationId }).whereIn('id', ids).pluck('id')) as string[]).map((id) => id.toLowerCase()));
    for (const l of leaves) if (!found.has(l.id)) issues.push({ loc: l.loc, msg: ref.msg, type: 'value_error.not_found' });
  }
  if (issues.length) throw new ValidationError(issues);
}

/** 422 naming each `tag` leaf (by its loc under `base`) whose tag is not one of the organization's. */
export async function checkTagReferences(db: Knex, organizationId: string, condition: Condition, base: Path): Promise<void> {
  const known = await resolveTags(db, organizationId, tagIdsOf(condition));
  const issues: ValidationIssue[] = [];
  const walk = (c: Condition, path: Path): void => {
    if ('all' in c) c.all.forEach((x, i) => walk(x, [...path, 'all', i]));
    else if ('any' in c) c.any.forEach((x, i) => walk(x, [...path, 'any', i]));
    else if ('not' in c) walk(c.not, [...path, 'not']);
    else if (c.field === 'tag') {
      const vals = Array.isArray(c.value) ? c.value : [c.value];
      vals.forEach((v, i) => {
        if (!known.has(String(v).toLowerCase())) issues.push({ loc: Array.isArray(c.value) ? [...path, 'value', i] : [...path, 'value'], msg: 'is not a tag of this organization', type: 'value_error.not_found' });
      });
    }
  };
  walk(condition, base);
  if (issues.length) throw new ValidationError(issues);
}
