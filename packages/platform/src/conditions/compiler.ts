/**
 * The compiler of a condition to ONE parameterised SQL statement over the ledger (integrations owns
 * partners and documents; this is the kernel's sanctioned cross-schema read, like the ledger module),
 * and the partner listings and figures built on it. Aging fields are evaluated as of today in the
 * organization's timezone (`now() AT TIME ZONE organizations.timezone`). A `tag` leaf compiles,
 * inside the same statement, to "hand-tagged (admin.tag_partners) OR the tag's rule_condition".
 */
import type { Knex } from 'knex';
import { ConflictError } from '../errors.js';
import { defaultWorkerThreads, WorkerPool } from '../worker-pool.js';
import type { ops as compileOps } from './compile-worker.js';
import { LEDGER_TABLES, ORGANIZATIONS_TABLE, type BusinessUnitScope, type SqlFragment } from '../ledger/index.js';
import { FIELDS, MAX_COMPILED_NODES, TAG_PARTNERS_TABLE, type Condition, type ConditionLeaf } from './language.js';
import { compiledSize, resolveTags, tagIdsOf, type ResolvedTag } from './tags.js';

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

/** `condition` and the negation of each of `exclude`, compiled into WHERE terms with their bindings. */
export interface CompiledConditions {
  where: string[];
  bindings: Knex.RawBinding[];
  aggregate: boolean;
}

/** Compile `condition` (null: none) and NOT each of `exclude`; `tags` must hold every tag they refer to. */
export function compileConditions(condition: Condition | null, exclude: readonly Condition[], tags: Map<string, ResolvedTag>): CompiledConditions {
  const compiler = new Compiler(tags);
  const where: string[] = [];
  if (condition) where.push(compiler.compile(condition));
  for (const c of exclude) where.push(`NOT ${compiler.compile(c)}`);
  return { where, bindings: compiler.bindings, aggregate: compiler.aggregate };
}

/**
 * Conditions up to this many nodes (after tag expansion) compile on the calling thread: well under a
 * millisecond, less than the trip to a thread. Larger ones, up to MAX_COMPILED_NODES, compile on the
 * condition pool, so a request with a large segment never holds its API's event loop (DESIGN §9).
 */
export const INLINE_COMPILE_NODES = 1_000;

export type ConditionCompilePool = WorkerPool<typeof compileOps>;

/** A pool of condition-compiling threads: at most `threads` compiles at once, `maxQueue` waiting; beyond that 503 with Retry-After. */
export function createConditionCompilePool(opts: { threads?: number; maxQueue?: number } = {}): ConditionCompilePool {
  return new WorkerPool<typeof compileOps>({
    name: 'Condition compilation',
    entry: new URL(`./compile-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
    threads: opts.threads ?? defaultWorkerThreads(),
    maxQueue: opts.maxQueue ?? 64,
    // a compile takes milliseconds: one second sees the queue drained
    retryAfterSeconds: 1,
  });
}

let sharedCompilePool: ConditionCompilePool | null = null;

/** The process's condition-compiling threads, created on first use. */
export function sharedConditionCompilePool(): ConditionCompilePool {
  sharedCompilePool ??= createConditionCompilePool();
  return sharedCompilePool;
}

/**
 * compileConditions on the calling thread when they are small (`size` ≤ INLINE_COMPILE_NODES), else on
 * `pool` (WorkerPoolBusyError, 503 with Retry-After, when every thread compiles and its queue is full).
 */
export function compileConditionsOffLoop(
  condition: Condition | null,
  exclude: readonly Condition[],
  tags: Map<string, ResolvedTag>,
  size: number,
  pool: ConditionCompilePool = sharedConditionCompilePool(),
): Promise<CompiledConditions> {
  if (size <= INLINE_COMPILE_NODES) return Promise.resolve(compileConditions(condition, exclude, tags));
  return pool.run('compile', [condition, exclude, tags]);
}

/**
 * Per partner (p), over its open invoices: count, open and overdue sums in local-currency cents,
 * and the days past due of the oldest overdue one, as of `org.today`. Reads the covering aging index.
 * Also the collections engine's overdue figure (collection-candidates.ts), with `org.today` its run's date.
 */
export const AGGREGATE_SQL = `LEFT JOIN LATERAL (
    SELECT count(*)::int AS open_invoice_count,
      coalesce(sum(d.cents), 0) AS open_cents,
      coalesce(sum(d.cents) FILTER (WHERE d.net_due_date < org.today), 0) AS overdue_cents,
      coalesce(max(org.today - d.net_due_date) FILTER (WHERE d.net_due_date < org.today), 0)::int AS max_days_overdue
    FROM (SELECT net_due_date, coalesce(open_lc_cents,
                   CASE WHEN open_unconverted_currency = org.base THEN round(open_unconverted_amount * 100)::bigint END) AS cents
          FROM ${LEDGER_TABLES.documents}
          WHERE organization_id = p.organization_id AND partner_id = p.id AND kind = 'invoice' AND status_open) d
  ) a ON true`;

export const ORG_CTE = `WITH org AS (SELECT (now() AT TIME ZONE timezone)::date AS today, base_currency AS base FROM ${ORGANIZATIONS_TABLE} WHERE id = ?)`;

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
export async function listPartnersMatching(
  db: Knex,
  organizationId: string,
  q: PartnerQuery,
  opts: { pool?: ConditionCompilePool } = {},
): Promise<{ rows: PartnerSummaryRow[]; total: number }> {
  const tags = await resolveTags(db, organizationId, tagIdsOf(q.condition, ...(q.exclude ?? [])));
  const size = [q.condition, ...(q.exclude ?? [])].reduce((n, c) => n + (c ? compiledSize(c, tags) : 0), 0);
  if (size > MAX_COMPILED_NODES) {
    throw new ConflictError(`The conditions expand through their tags to ${size} nodes, more than the ${MAX_COMPILED_NODES} one query may compile; simplify the conditions or the tag rules they use.`);
  }
  const compiled = await compileConditionsOffLoop(q.condition, q.exclude ?? [], tags, size, opts.pool);
  const where = compiled.where;
  const condBindings = compiled.bindings;
  const compiler = { aggregate: compiled.aggregate };
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
    const counted = await listPartnersMatching(db, organizationId, { ...q, offset: 0, limit: 1 }, opts);
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
