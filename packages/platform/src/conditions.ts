/**
 * The condition language of tags and customer segments (issue 13 §4), and its compiler to ONE
 * parameterised SQL statement over the ledger (integrations owns partners and documents; this is
 * the kernel read module's sanctioned cross-schema read, like ledger.ts).
 *
 *   node := {"all": [node, …]} | {"any": [node, …]} | {"not": node} | {"field", "op", "value"}
 *
 * A whitelist (FIELDS) maps each field to a trusted SQL expression and the ops that fit its type;
 * values only ever travel as bindings, never as SQL text. Aging fields are evaluated as of today in
 * the organization's timezone (`now() AT TIME ZONE organizations.timezone`).
 *
 * Tags live in admin's schema (admin.tags, admin.tag_partners), partners in integrations'. A `tag`
 * leaf is compiled, inside the same statement, to "hand-tagged (a bound tag id looked up in
 * admin.tag_partners) OR the tag's rule_condition" — the rule is loaded first (resolveTags) and
 * inlined as a nested condition. A tag's own rule may not use the `tag` field (no recursion).
 * Admin writes those tables; this module only reads them (as ledger.ts reads admin.business_units).
 */
import type { Knex } from 'knex';
import { z } from 'zod';
import { ConflictError, ValidationError, type ValidationIssue } from './errors.js';
import { BUSINESS_UNITS_TABLE, LEDGER_TABLES, ORGANIZATIONS_TABLE, type BusinessUnitScope, type SqlFragment } from './ledger/index.js';

export const TAGS_TABLE = 'admin.tags';
export const TAG_PARTNERS_TABLE = 'admin.tag_partners';
export const SEGMENTS_TABLE = 'admin.customer_segments';
export const USERS_TABLE = 'admin.users';

export type ConditionOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in' | 'contains' | 'starts_with';
export type ConditionField =
  | 'name' | 'country' | 'currency' | 'business_unit_id' | 'assignee_id'
  | 'total_open_lc' | 'overdue_lc' | 'max_days_overdue' | 'open_invoice_count' | 'tag';

export type ConditionLeaf = { field: ConditionField; op: ConditionOp; value: unknown };
export type Condition = { all: Condition[] } | { any: Condition[] } | { not: Condition } | ConditionLeaf;

export const CONDITION_LIMITS = { maxDepth: 8, maxNodes: 100, maxInValues: 500, maxStringLength: 256 } as const;

/**
 * The most nodes one partner statement compiles to after `tag` leaves are expanded into their rules
 * (compiledSize). The written limits (CONDITION_LIMITS) bound a tree as sent; a `tag` leaf inlines the
 * tag's rule once per id it names, so without this bound 100 leaves × 500 ids × a 100-node rule make
 * millions of SQL fragments and a statement that only ends at the database deadline.
 */
export const MAX_COMPILED_NODES = 10_000;

type Kind = 'text' | 'code' | 'uuid' | 'decimal' | 'integer' | 'tag';
const OPS: Record<Kind, readonly ConditionOp[]> = {
  text: ['eq', 'ne', 'in', 'contains', 'starts_with'],
  code: ['eq', 'ne', 'in'],
  uuid: ['eq', 'ne', 'in'],
  decimal: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'],
  integer: ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in'],
  tag: ['eq', 'ne', 'in'],
};

/** The whitelist: field → type and trusted SQL (p = the partner row, a = its open-invoice aggregate). */
const FIELDS: Record<ConditionField, { kind: Kind; sql: string; aggregate?: boolean; doc: string }> = {
  name: { kind: 'text', sql: 'lower(p.name)', doc: 'customer name (case-insensitive)' },
  country: { kind: 'code', sql: "upper(p.address->>'country')", doc: 'country of the customer address (ISO code as pushed, case-insensitive)' },
  currency: {
    kind: 'code',
    sql: `upper(trim(coalesce(p.currency, (SELECT cd.currency FROM ${LEDGER_TABLES.documents} cd WHERE cd.organization_id = p.organization_id AND cd.partner_id = p.id
           ORDER BY cd.document_date DESC NULLS LAST, cd.id DESC LIMIT 1))))`,
    doc: "customer's currency (ISO 4217, case-insensitive): the partner's own, else that of its latest document (pushed customers carry none)",
  },
  business_unit_id: { kind: 'uuid', sql: 'p.business_unit_id', doc: 'business unit (null: none)' },
  assignee_id: { kind: 'uuid', sql: 'p.assignee_id', doc: 'assigned user (null: none)' },
  total_open_lc: { kind: 'decimal', sql: 'a.open_cents', aggregate: true, doc: 'sum of open invoices in local currency' },
  overdue_lc: { kind: 'decimal', sql: 'a.overdue_cents', aggregate: true, doc: 'sum of open invoices past net due date, local currency' },
  max_days_overdue: { kind: 'integer', sql: 'a.max_days_overdue', aggregate: true, doc: 'days past due of the oldest overdue open invoice (0: none overdue)' },
  open_invoice_count: { kind: 'integer', sql: 'a.open_invoice_count', aggregate: true, doc: 'number of open invoices' },
  tag: { kind: 'tag', sql: '', doc: 'tag id: tagged by hand or matched by the tag rule' },
};
export const CONDITION_FIELDS = Object.keys(FIELDS) as ConditionField[];
export const CONDITION_OPS: ConditionOp[] = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'in', 'contains', 'starts_with'];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL_RE = /^-?\d{1,15}(\.\d{1,2})?$/;

type Path = (string | number)[];

function checkScalar(kind: Kind, v: unknown, op: ConditionOp): string | null {
  const nullable = (kind === 'uuid') && (op === 'eq' || op === 'ne');
  if (v === null) return nullable ? null : 'must not be null';
  switch (kind) {
    case 'text':
    case 'code':
      if (typeof v !== 'string') return 'must be a string';
      if (v.length > CONDITION_LIMITS.maxStringLength) return `must be at most ${CONDITION_LIMITS.maxStringLength} characters`;
      if (v.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
      return null;
    case 'uuid':
    case 'tag':
      return typeof v === 'string' && UUID_RE.test(v) ? null : 'must be a UUID';
    case 'decimal':
      if (typeof v === 'number' && Number.isFinite(v) && DECIMAL_RE.test(String(v))) return null;
      return typeof v === 'string' && DECIMAL_RE.test(v) ? null : 'must be a decimal amount (at most 2 decimals), as a string or number';
    case 'integer':
      return typeof v === 'number' && Number.isSafeInteger(v) && Math.abs(v) <= 1_000_000_000 ? null : 'must be an integer';
  }
}

/**
 * Validate a condition tree; every problem is reported with its `loc` inside the tree (prefixed by
 * `base`). Depth and node-count limits apply (CONDITION_LIMITS). `allowTag` false refuses `tag`
 * leaves (tag rules).
 */
export function conditionIssues(value: unknown, base: Path, opts: { allowTag?: boolean } = {}): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let nodes = 0;
  const add = (loc: Path, msg: string, type = 'value_error.condition'): void => {
    issues.push({ loc, msg, type });
  };
  const walk = (v: unknown, path: Path, depth: number): void => {
    nodes++;
    if (nodes > CONDITION_LIMITS.maxNodes) {
      if (nodes === CONDITION_LIMITS.maxNodes + 1) add(path, `a condition has at most ${CONDITION_LIMITS.maxNodes} nodes`, 'value_error.condition_size');
      return;
    }
    if (depth > CONDITION_LIMITS.maxDepth) return add(path, `conditions nest at most ${CONDITION_LIMITS.maxDepth} levels deep`, 'value_error.condition_depth');
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return add(path, 'must be a condition object: {all}, {any}, {not} or {field, op, value}');
    const keys = Object.keys(v);
    const o = v as Record<string, unknown>;
    if (keys.length === 1 && (keys[0] === 'all' || keys[0] === 'any')) {
      const list = o[keys[0]];
      if (!Array.isArray(list) || list.length === 0) return add([...path, keys[0]], 'must be a non-empty array of conditions');
      list.forEach((c, i) => walk(c, [...path, keys[0]!, i], depth + 1));
      return;
    }
    if (keys.length === 1 && keys[0] === 'not') return walk(o.not, [...path, 'not'], depth + 1);
    const extra = keys.filter((k) => !['field', 'op', 'value'].includes(k));
    if (extra.length) return add([...path, extra[0]!], `unknown key "${extra[0]}"; a node is {all}, {any}, {not} or {field, op, value}`);
    if (typeof o.field !== 'string' || !(o.field in FIELDS)) return add([...path, 'field'], `unknown field; one of ${CONDITION_FIELDS.join(', ')}`);
    const field = o.field as ConditionField;
    if (field === 'tag' && opts.allowTag === false) return add([...path, 'field'], 'a tag rule may not refer to tags');
    const kind = FIELDS[field].kind;
    if (typeof o.op !== 'string' || !CONDITION_OPS.includes(o.op as ConditionOp)) return add([...path, 'op'], `unknown op; one of ${CONDITION_OPS.join(', ')}`);
    const op = o.op as ConditionOp;
    if (!OPS[kind].includes(op)) return add([...path, 'op'], `op "${op}" does not fit field "${field}"; use one of ${OPS[kind].join(', ')}`);
    if (!('value' in o)) return add([...path, 'value'], 'is required');
    if (op === 'in') {
      if (!Array.isArray(o.value) || o.value.length === 0 || o.value.length > CONDITION_LIMITS.maxInValues) {
        return add([...path, 'value'], `must be an array of 1..${CONDITION_LIMITS.maxInValues} values`);
      }
      o.value.forEach((item, i) => {
        const msg = checkScalar(kind, item, op);
        if (msg) add([...path, 'value', i], msg);
      });
      return;
    }
    const msg = checkScalar(kind, o.value, op);
    if (msg) add([...path, 'value'], msg);
  };
  walk(value, base, 1);
  return issues;
}

const EXAMPLE: Condition = {
  all: [
    { field: 'country', op: 'in', value: ['DE', 'AT'] },
    { field: 'max_days_overdue', op: 'gt', value: 30 },
    { not: { field: 'name', op: 'starts_with', value: 'Test' } },
  ],
};

/** Markdown description of the language, for OpenAPI. */
export const CONDITION_DOC = [
  'A condition tree: `{"all":[…]}`, `{"any":[…]}`, `{"not":{…}}`, or a leaf `{"field","op","value"}`.',
  `Limits: ${CONDITION_LIMITS.maxDepth} levels, ${CONDITION_LIMITS.maxNodes} nodes, \`in\` lists of 1..${CONDITION_LIMITS.maxInValues}, strings ≤ ${CONDITION_LIMITS.maxStringLength}.`,
  'Fields (ops): ' + CONDITION_FIELDS.map((f) => `\`${f}\` — ${FIELDS[f].doc} (${OPS[FIELDS[f].kind].join(', ')})`).join('; ') + '.',
  'Amounts in the base currency: an open invoice counts with its local-currency amount, or its open amount when it is in the base currency; other invoices without a local amount count in `open_invoice_count` and `max_days_overdue` but in no sum.',
  `After expansion (each \`tag\` leaf inlines its tag's rule once per tag id it names) one statement compiles to at most ${MAX_COMPILED_NODES} nodes.`,
  'Aging is as of today in the organization timezone. `ne` on a null field is true; text ops are case-insensitive. Errors give `loc` inside the tree (422).',
].join(' ');

/** A zod schema for a condition body field: an object validated by conditionIssues. */
export function conditionSchema(opts: { allowTag?: boolean } = {}) {
  return z
    .record(z.string(), z.unknown())
    .superRefine((v, ctx) => {
      for (const issue of conditionIssues(v, [], opts)) ctx.addIssue({ code: 'custom', path: issue.loc, message: issue.msg });
    })
    // keys other than these are refused by conditionIssues (422 `unknown key`), so OpenAPI lists them
    .meta({ description: CONDITION_DOC, examples: [EXAMPLE], propertyNames: { type: 'string', enum: ['all', 'any', 'not', 'field', 'op', 'value'] } });
}

// ---------------------------------------------------------------- tags across the boundary

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

// ---------------------------------------------------------------- compiler

class Compiler {
  readonly bindings: Knex.RawBinding[] = [];
  aggregate = false;
  constructor(private readonly tags: Map<string, ResolvedTag>) {}

  compile(c: Condition): string {
    if ('all' in c) return `(${c.all.map((x) => this.compile(x)).join(' AND ')})`;
    if ('any' in c) return `(${c.any.map((x) => this.compile(x)).join(' OR ')})`;
    if ('not' in c) return `(NOT ${this.compile(c.not)})`;
    return this.leaf(c);
  }

  private bind(v: unknown): string {
    this.bindings.push(v as Knex.RawBinding);
    return '?';
  }

  private tagMatch(id: string): string {
    const tag = this.tags.get(id.toLowerCase());
    // an unknown (e.g. deleted) tag matches nobody
    if (!tag) return 'false';
    const hand = `EXISTS (SELECT 1 FROM ${TAG_PARTNERS_TABLE} tp WHERE tp.tag_id = ${this.bind(tag.id)}::uuid AND tp.partner_id = p.id)`;
    return tag.rule_condition ? `(${hand} OR ${this.compile(tag.rule_condition)})` : hand;
  }

  /** A leaf, always true or false (never NULL), so NOT is plain negation. */
  private leaf(c: ConditionLeaf): string {
    const f = FIELDS[c.field];
    if (f.kind === 'tag') {
      const ids = (Array.isArray(c.value) ? c.value : [c.value]).map(String);
      const any = `(${ids.map((id) => this.tagMatch(id)).join(' OR ')})`;
      return c.op === 'ne' ? `(NOT ${any})` : any;
    }
    if (f.aggregate) this.aggregate = true;
    const col = f.sql;
    const cast = f.kind === 'uuid' ? '::uuid' : f.kind === 'decimal' ? '::numeric' : f.kind === 'integer' ? '::int' : '::text';
    const norm = (v: unknown): unknown => {
      if (f.kind === 'text') return String(v).toLowerCase();
      if (f.kind === 'code') return String(v).toUpperCase();
      if (f.kind === 'uuid') return String(v).toLowerCase();
      if (f.kind === 'decimal') return String(v);
      return v;
    };
    // amounts are compared in cents (the aggregate sums integer cents)
    const value = (v: unknown): string => (f.kind === 'decimal' ? `(${this.bind(norm(v))}::numeric * 100)` : `${this.bind(norm(v))}${cast}`);
    switch (c.op) {
      case 'eq':
        if (c.value === null) return `(${col} IS NULL)`;
        return `coalesce(${col} = ${value(c.value)}, false)`;
      case 'ne':
        if (c.value === null) return `(${col} IS NOT NULL)`;
        return `(${col} IS DISTINCT FROM ${value(c.value)})`;
      case 'lt':
        return `coalesce(${col} < ${value(c.value)}, false)`;
      case 'lte':
        return `coalesce(${col} <= ${value(c.value)}, false)`;
      case 'gt':
        return `coalesce(${col} > ${value(c.value)}, false)`;
      case 'gte':
        return `coalesce(${col} >= ${value(c.value)}, false)`;
      case 'in': {
        const arr = f.kind === 'uuid' ? '::uuid[]' : f.kind === 'integer' ? '::int[]' : '::text[]';
        return `coalesce(${col} = ANY(${this.bind((c.value as unknown[]).map(norm))}${arr}), false)`;
      }
      case 'contains':
        return `coalesce(strpos(${col}, ${this.bind(norm(c.value))}::text) > 0, false)`;
      case 'starts_with':
        return `coalesce(starts_with(${col}, ${this.bind(norm(c.value))}::text), false)`;
    }
  }
}

/** Compile a validated condition; `tags` must hold every tag it refers to (resolveTags). */
export function compileCondition(c: Condition, tags: Map<string, ResolvedTag>): SqlFragment & { aggregate: boolean } {
  const compiler = new Compiler(tags);
  const sql = compiler.compile(c);
  return { sql, bindings: compiler.bindings, aggregate: compiler.aggregate };
}

/**
 * Per partner (p), over its open invoices: count, open and overdue sums in local-currency cents,
 * and the days past due of the oldest overdue one, as of `org.today`. Reads the covering aging index.
 */
const AGGREGATE_SQL = `LEFT JOIN LATERAL (
    SELECT count(*)::int AS open_invoice_count,
      coalesce(sum(d.cents), 0) AS open_cents,
      coalesce(sum(d.cents) FILTER (WHERE d.net_due_date < org.today), 0) AS overdue_cents,
      coalesce(max(org.today - d.net_due_date) FILTER (WHERE d.net_due_date < org.today), 0)::int AS max_days_overdue
    FROM (SELECT net_due_date, coalesce(open_lc_cents,
                   CASE WHEN open_unconverted_currency = org.base THEN round(open_unconverted_amount * 100)::bigint END) AS cents
          FROM ${LEDGER_TABLES.documents}
          WHERE organization_id = p.organization_id AND partner_id = p.id AND kind = 'invoice' AND status_open) d
  ) a ON true`;

const ORG_CTE = `WITH org AS (SELECT (now() AT TIME ZONE timezone)::date AS today, base_currency AS base FROM ${ORGANIZATIONS_TABLE} WHERE id = ?)`;

export const PARTNER_SUMMARY_COLUMNS = [
  'id', 'account_number', 'assignee_id', 'business_unit_id', 'currency', 'email', 'name', 'legal_name', 'phone', 'parent_id', 'remote_id', 'created_at', 'modified_at',
] as const;

export interface PartnerSummaryRow {
  id: string;
  account_number: string | null;
  assignee_id: string | null;
  business_unit_id: string | null;
  currency: string | null;
  email: string | null;
  name: string;
  legal_name: string | null;
  phone: string | null;
  parent_id: string | null;
  remote_id: string;
  created_at: Date;
  modified_at: Date;
}

export interface PartnerQuery {
  /** the partners must match this (null: every partner) */
  condition: Condition | null;
  /** …and none of these (higher-priority segments) */
  exclude?: readonly Condition[];
  /** only these partners (ids) — e.g. one partner's detail */
  ids?: readonly string[];
  /** the caller's business units: partners of other units are left out */
  scope: BusinessUnitScope;
  offset: number;
  limit: number;
  /** also count every match (window count) */
  withTotal?: boolean;
}

/**
 * One statement: the organization's partners matching `condition` and none of `exclude`, in scope,
 * ordered by name then id, one page. Tags referred to are loaded first (one small read of admin.tags).
 */
export async function listPartnersMatching(db: Knex, organizationId: string, q: PartnerQuery): Promise<{ rows: PartnerSummaryRow[]; total: number }> {
  const tags = await resolveTags(db, organizationId, tagIdsOf(q.condition, ...(q.exclude ?? [])));
  const size = [q.condition, ...(q.exclude ?? [])].reduce((n, c) => n + (c ? compiledSize(c, tags) : 0), 0);
  if (size > MAX_COMPILED_NODES) {
    throw new ConflictError(`The conditions expand through their tags to ${size} nodes, more than the ${MAX_COMPILED_NODES} one query may compile; simplify the conditions or the tag rules they use.`);
  }
  const compiler = new Compiler(tags);
  const where: string[] = [];
  if (q.condition) where.push(compiler.compile(q.condition));
  for (const c of q.exclude ?? []) where.push(`NOT ${compiler.compile(c)}`);
  const condBindings = compiler.bindings;
  const extra: string[] = [];
  const extraBindings: Knex.RawBinding[] = [];
  if (q.scope !== '*') {
    extra.push('(p.business_unit_id IS NULL OR p.business_unit_id = ANY(?::uuid[]))');
    extraBindings.push([...q.scope]);
  }
  if (q.ids) {
    extra.push('p.id = ANY(?::uuid[])');
    extraBindings.push([...q.ids]);
  }
  const cols = PARTNER_SUMMARY_COLUMNS.map((c) => `p.${c}`).join(', ');
  const sql = `${ORG_CTE}
    SELECT ${cols}${q.withTotal ? ', count(*) OVER () AS total' : ''}
    FROM ${LEDGER_TABLES.partners} p CROSS JOIN org
    ${compiler.aggregate ? AGGREGATE_SQL : ''}
    WHERE p.organization_id = ? ${extra.map((e) => `AND ${e}`).join(' ')} ${where.map((w) => `AND ${w}`).join(' ')}
    ORDER BY p.name, p.id
    OFFSET ? LIMIT ?`;
  const bindings: Knex.RawBinding[] = [organizationId, organizationId, ...extraBindings, ...condBindings, q.offset, q.limit];
  const rows = (await db.raw(sql, bindings)).rows as (PartnerSummaryRow & { total?: string })[];
  let total = rows.length ? Number(rows[0]!.total ?? rows.length) : 0;
  if (q.withTotal && rows.length === 0 && q.offset > 0) {
    const counted = await listPartnersMatching(db, organizationId, { ...q, offset: 0, limit: 1 });
    total = counted.total;
  }
  return { rows: rows.map(({ total: _t, ...r }) => { void _t; return r as PartnerSummaryRow; }), total };
}

export interface PartnerFigures {
  open_invoice_count: number;
  total_open_lc: string;
  overdue_lc: string;
  max_days_overdue: number;
}

/**
 * One partner's open/overdue figures (as the condition fields see them) and, in the same statement,
 * which of `tags` (the organization's tags with their rules) it carries. Null when unknown.
 */
export async function partnerFiguresAndTags(
  db: Knex,
  organizationId: string,
  partnerId: string,
  tags: readonly ResolvedTag[],
): Promise<{ figures: PartnerFigures; tagIds: string[] } | null> {
  const compiler = new Compiler(new Map(tags.map((t) => [t.id, t])));
  const tagCols = tags.map((t, i) => `${compiler.compile({ field: 'tag', op: 'eq', value: t.id })} AS t${i}`);
  const sql = `${ORG_CTE}
    SELECT a.open_invoice_count, (a.open_cents / 100.0)::numeric(20, 2)::text AS total_open_lc,
      (a.overdue_cents / 100.0)::numeric(20, 2)::text AS overdue_lc, a.max_days_overdue
      ${tagCols.map((c) => `, ${c}`).join('')}
    FROM ${LEDGER_TABLES.partners} p CROSS JOIN org
    ${AGGREGATE_SQL}
    WHERE p.organization_id = ? AND p.id = ?`;
  const res = await db.raw(sql, [organizationId, ...compiler.bindings, organizationId, partnerId]);
  const row = res.rows[0] as (PartnerFigures & Record<string, unknown>) | undefined;
  if (!row) return null;
  return {
    figures: { open_invoice_count: row.open_invoice_count, total_open_lc: row.total_open_lc, overdue_lc: row.overdue_lc, max_days_overdue: row.max_days_overdue },
    tagIds: tags.filter((_, i) => row[`t${i}`] === true).map((t) => t.id),
  };
}

// ---------------------------------------------------------------- admin-owned reads for the partners API

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

/** The conditions of the organization's segments of higher priority (smaller number) than `priority`. */
export async function higherPrioritySegmentConditions(db: Knex, organizationId: string, priority: number): Promise<Condition[]> {
  const rows = (await db(SEGMENTS_TABLE).select('conditions').where({ organization_id: organizationId }).andWhere('priority', '<', priority).orderBy('priority')) as { conditions: Condition }[];
  return rows.map((r) => r.conditions);
}

/**
 * A body's reference to a user (`id` at `loc`): 422 unless it is an active (not deactivated) user of
 * the organization, exactly as for a random id (admin owns users; read-only here).
 */
export async function checkUserReference(db: Knex, organizationId: string, id: string, loc: Path): Promise<void> {
  const row = await db(USERS_TABLE).select('id').where({ organization_id: organizationId, id }).whereNull('deactivated_at').first();
  if (!row) throw new ValidationError([{ loc, msg: 'is not an active user of this organization', type: 'value_error.not_found' }]);
}

// ---------------------------------------------------------------- partner summary (spec 2.13)

/** Partner (customer) summary, spec 2.13 (every field), shared by admin's and integrations' listings. */
export const partnerSummarySchema = z
  .object({
    object: z.literal('partner'),
    id: z.string(),
    account_number: z.string().nullable(),
    assignee_id: z.string().nullable().describe('assigned user'),
    business_unit_id: z.string().nullable(),
    currency: z.string().nullable(),
    email: z.string().nullable().describe('company email'),
    name: z.string(),
    legal_name: z.string().nullable(),
    phone: z.string().nullable(),
    parent_id: z.string().nullable(),
    remote_id: z.string().describe('third-party id (the ERP customer code)'),
    created_at: z.string().describe('ISO 8601 UTC'),
    modified_at: z.string().describe('ISO 8601 UTC'),
  })
  .meta({ id: 'PartnerSummary' });

export function partnerSummaryView(r: PartnerSummaryRow): z.input<typeof partnerSummarySchema> {
  return {
    object: 'partner',
    id: r.id,
    account_number: r.account_number,
    assignee_id: r.assignee_id,
    business_unit_id: r.business_unit_id,
    currency: r.currency?.trim() ?? null,
    email: r.email,
    name: r.name,
    legal_name: r.legal_name,
    phone: r.phone,
    parent_id: r.parent_id,
    remote_id: r.remote_id,
    created_at: new Date(r.created_at).toISOString(),
    modified_at: new Date(r.modified_at).toISOString(),
  };
}
