/**
 * The condition language of tags and customer segments: its node types, fields, operators and
 * limits, the validation that names each bad node's `loc`, and its documentation and schema.
 *
 *   node := {"all": [node, …]} | {"any": [node, …]} | {"not": node} | {"field", "op", "value"}
 *
 * A whitelist (FIELDS) maps each field to a trusted SQL expression and the ops that fit its type;
 * values only ever travel as bindings, never as SQL text.
 */
import { z } from 'zod';
import { type ValidationIssue } from '../errors.js';
import { LEDGER_TABLES } from '../ledger/index.js';

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
export const FIELDS: Record<ConditionField, { kind: Kind; sql: string; aggregate?: boolean; doc: string }> = {
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

export type Path = (string | number)[];

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
