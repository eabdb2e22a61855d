/**
 * Liquid for outreach templates (email subjects and bodies, SMS bodies). liquidjs runs no code: a
 * template can only read the variables below and apply Liquid's built-in filters. The engine is
 * strict (an unknown variable or filter is an error) and bounded (parse, render-time and memory
 * limits), so a template cannot hang or exhaust a worker.
 *
 * Variable catalogue (what a template may read):
 *   customer.name, customer.legal_name, customer.account_number, customer.email, customer.phone
 *   invoices[]          the customer's open invoices, oldest due date first; each:
 *                         number, document_date, due_date, currency, amount, amount_open,
 *                         days_overdue (0 when not yet due), is_overdue
 *   overdue_invoices[]  the subset of invoices past their due date (same fields)
 *   totals.open_amount, totals.overdue_amount (decimal strings in the organization's base
 *     currency when every invoice is in it, else the sum of the document-currency amounts),
 *     totals.currency, totals.open_count, totals.overdue_count, totals.max_days_overdue
 *   sender.name, sender.email     the user sending (the caller, in previews)
 *   organization.name, organization.base_currency
 *   payment.amount, payment.currency, payment.date (YYYY-MM-DD or null), payment.reference (or null):
 *     the payment a receipt confirms (cash-app's payment receipt, whose `invoices` are the invoices
 *     the payment paid); previews carry a sample payment
 *   today               YYYY-MM-DD in the organization's timezone
 * Inside `{% for invoice in invoices %}` the loop variable has the invoice fields.
 */
import type { Template } from 'liquidjs';
import { createTemplateEngine, ValidationError, type ValidationIssue } from '@rp/platform';

const INVOICE_FIELDS = ['number', 'document_date', 'due_date', 'currency', 'amount', 'amount_open', 'days_overdue', 'is_overdue'] as const;

/** Top-level variables and the fields of each (arrays: the fields of their items). */
export const VARIABLE_CATALOGUE = {
  customer: { kind: 'object', fields: ['name', 'legal_name', 'account_number', 'email', 'phone'] },
  invoices: { kind: 'array', fields: INVOICE_FIELDS },
  overdue_invoices: { kind: 'array', fields: INVOICE_FIELDS },
  totals: { kind: 'object', fields: ['open_amount', 'overdue_amount', 'currency', 'open_count', 'overdue_count', 'max_days_overdue'] },
  sender: { kind: 'object', fields: ['name', 'email'] },
  organization: { kind: 'object', fields: ['name', 'base_currency'] },
  payment: { kind: 'object', fields: ['amount', 'currency', 'date', 'reference'] },
  today: { kind: 'scalar', fields: [] },
} as const satisfies Record<string, { kind: 'object' | 'array' | 'scalar'; fields: readonly string[] }>;

type CatalogueName = keyof typeof VARIABLE_CATALOGUE;

export interface TemplateInvoice {
  number: string;
  document_date: string | null;
  due_date: string | null;
  currency: string;
  amount: string;
  amount_open: string;
  days_overdue: number;
  is_overdue: boolean;
}

export interface TemplateContext {
  customer: { name: string; legal_name: string | null; account_number: string | null; email: string | null; phone: string | null };
  invoices: TemplateInvoice[];
  overdue_invoices: TemplateInvoice[];
  totals: { open_amount: string; overdue_amount: string; currency: string; open_count: number; overdue_count: number; max_days_overdue: number };
  sender: { name: string; email: string };
  organization: { name: string; base_currency: string };
  /** the payment a receipt confirms; previews and collection emails carry the sample payment */
  payment: { amount: string; currency: string; date: string | null; reference: string | null };
  today: string;
}

/** Limits of the kernel's engine (packages/platform/src/email-templates.ts), shared with cash-app's receipts. */
export { TEMPLATE_PARSE_LIMIT as PARSE_LIMIT, TEMPLATE_RENDER_LIMIT_MS as RENDER_LIMIT_MS, TEMPLATE_MEMORY_LIMIT as MEMORY_LIMIT } from '@rp/platform';

export const liquid = createTemplateEngine();

/** The sample payment (previews; only a payment receipt carries a real one). */
export function samplePayment(currency: string, today: string): TemplateContext['payment'] {
  return { amount: '1500.50', currency, date: today, reference: 'SAMPLE-REF-1' };
}

/** A documented sample customer: what previews render with when no partner is given. */
export function sampleContext(org: { name: string; base_currency: string }, sender: { name: string; email: string }, today: string): TemplateContext {
  const invoices: TemplateInvoice[] = [
    { number: 'INV-1001', document_date: '2026-01-05', due_date: '2026-02-04', currency: org.base_currency, amount: '1200.00', amount_open: '1200.00', days_overdue: 45, is_overdue: true },
    { number: 'INV-1002', document_date: '2026-02-10', due_date: '2026-03-12', currency: org.base_currency, amount: '800.50', amount_open: '300.50', days_overdue: 9, is_overdue: true },
    { number: 'INV-1003', document_date: '2026-03-01', due_date: '2026-03-31', currency: org.base_currency, amount: '450.00', amount_open: '450.00', days_overdue: 0, is_overdue: false },
  ];
  return {
    customer: { name: 'Sample Customer GmbH', legal_name: 'Sample Customer GmbH', account_number: 'C-0001', email: 'ap@sample-customer.example', phone: '+49 30 1234567' },
    invoices,
    overdue_invoices: invoices.filter((i) => i.is_overdue),
    totals: { open_amount: '1950.50', overdue_amount: '1500.50', currency: org.base_currency, open_count: 3, overdue_count: 2, max_days_overdue: 45 },
    sender,
    organization: org,
    payment: samplePayment(org.base_currency, today),
    today,
  };
}

/** Line and column of a liquidjs error (from its token, else its message). */
function position(err: unknown): { line: number; col: number } | null {
  const e = err as { token?: { getPosition?: () => [number, number] }; message?: string };
  const p = e.token?.getPosition?.();
  if (p) return { line: p[0], col: p[1] };
  const m = /line:(\d+), col:(\d+)/.exec(e.message ?? '');
  return m ? { line: Number(m[1]), col: Number(m[2]) } : null;
}

function issue(field: string, msg: string, pos: { line: number; col: number } | null, type: string): ValidationIssue {
  return { loc: pos ? ['body', field, `line ${pos.line}`, `column ${pos.col}`] : ['body', field], msg: pos ? `line ${pos.line}, column ${pos.col}: ${msg}` : msg, type };
}

function cleanMessage(err: unknown): string {
  return ((err as Error).message ?? String(err)).replace(/, line:\d+, col:\d+.*$/s, '').split('\n')[0]!;
}

/** Normal form used by auto_correct: lower case, camelCase and hyphens to snake_case. */
function normalizeSegment(s: string): string {
  return s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toLowerCase();
}

/** Is `segments` a path the catalogue knows? (array items by index, or first/last, and `size`). */
function known(segments: readonly (string | number)[]): boolean {
  const [head, ...rest] = segments;
  const entry = VARIABLE_CATALOGUE[head as CatalogueName];
  if (!entry || typeof head !== 'string') return false;
  if (rest.length === 0) return true;
  if (entry.kind === 'scalar') return rest.length === 1 && rest[0] === 'size';
  if (entry.kind === 'object') return rest.length === 1 && (entry.fields as readonly string[]).includes(String(rest[0]));
  // array
  const [sel, field, ...more] = rest;
  if (sel === 'size' && field === undefined) return true;
  if (!(typeof sel === 'number' || sel === 'first' || sel === 'last')) return false;
  if (field === undefined) return true;
  return more.length === 0 && (entry.fields as readonly string[]).includes(String(field));
}

/** The catalogue path a mistyped one means (auto_correct), or null. */
function corrected(segments: readonly (string | number)[]): (string | number)[] | null {
  const fixed = segments.map((s) => (typeof s === 'string' ? normalizeSegment(s) : s));
  return known(fixed) ? fixed : null;
}

const PATH_AT = /[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\[\d+\])*/y;

/** Offset in `source` of 1-based (line, col). */
function offsetOf(source: string, line: number, col: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) offset = source.indexOf('\n', offset) + 1;
  return offset + col - 1;
}

export interface CheckedTemplate {
  /** The source as saved (auto-corrected when asked). */
  source: string;
  /** Variable paths that auto_correct rewrote, e.g. `Customer.Name → customer.name`. */
  corrections: string[];
}

/**
 * Validate one template field: it must parse, use only catalogue variables (checked statically,
 * also in branches that a sample would not take) and render against the sample customer in strict
 * mode (which also checks the fields of loop variables). With `autoCorrect`, variable paths that
 * differ from a catalogue path only by case, camelCase or hyphens are rewritten to it first.
 * Throws a 422 naming the field, line and column.
 */
export async function checkTemplate(field: string, source: string, autoCorrect: boolean, sample: TemplateContext): Promise<CheckedTemplate> {
  const corrections: string[] = [];
  let globals: ReturnType<typeof liquid.analyzeSync>['globals'];
  try {
    // include/render/layout name files, and there are none: liquidjs fails them while parsing or
    // analysing (ENOENT), which is the template's error, not ours.
    if (/\{%-?\s*(include|render|layout)\b/.test(source)) throw new Error('include, render and layout are not available in templates');
    const parsed: Template[] = liquid.parse(source);
    globals = liquid.analyzeSync(parsed).globals;
  } catch (err) {
    throw new ValidationError([issue(field, cleanMessage(err), position(err), 'liquid_syntax')], `The ${field} is not valid Liquid: ${(err as Error).message}`);
  }
  const edits: Array<{ offset: number; length: number; text: string; from: string }> = [];
  const problems: ValidationIssue[] = [];
  for (const variables of Object.values(globals)) {
    for (const v of variables) {
      const segments = v.segments.map((s) => (typeof s === 'string' || typeof s === 'number' ? s : String(s)));
      if (known(segments)) continue;
      const fix = autoCorrect ? corrected(segments) : null;
      const pos = { line: v.location.row, col: v.location.col };
      if (fix) {
        const offset = offsetOf(source, pos.line, pos.col);
        PATH_AT.lastIndex = offset;
        const m = PATH_AT.exec(source);
        if (m) {
          const text = fix.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
          edits.push({ offset, length: m[0].length, text, from: m[0] });
          continue;
        }
      }
      problems.push(issue(field, `unknown variable ${segments.join('.')}`, pos, 'liquid_unknown_variable'));
    }
  }
  if (problems.length) {
    throw new ValidationError(problems, `The ${field} uses variables outside the catalogue (${problems.map((p) => p.msg).join('; ')}).`);
  }
  let fixed = source;
  for (const e of edits.sort((a, b) => b.offset - a.offset)) {
    fixed = fixed.slice(0, e.offset) + e.text + fixed.slice(e.offset + e.length);
    corrections.unshift(`${e.from} → ${e.text}`);
  }
  try {
    await liquid.parseAndRender(fixed, sample);
  } catch (err) {
    throw new ValidationError([issue(field, cleanMessage(err), position(err), 'liquid_render')], `The ${field} does not render: ${(err as Error).message}`);
  }
  return { source: fixed, corrections };
}

function renderError(field: string, err: unknown): ValidationError {
  // A saved template renders the sample; real data can still exceed a limit (e.g. many invoices).
  return new ValidationError([issue(field, cleanMessage(err), position(err), 'liquid_render')], `The ${field} does not render for this customer: ${(err as Error).message}`);
}

/**
 * Parsed saved templates, per process: a bounded LRU keyed by (template id, field) whose entry
 * holds the template's `modified_at` and source. An entry is used only when both equal the row just
 * read, so a PATCHed template renders its new text at once (every save sets modified_at; the source
 * comparison also covers two saves within the same microsecond). Bounded by entry count and by
 * total source characters (a template may be up to 100,000).
 */
export class ParsedTemplateCache {
  private readonly entries = new Map<string, { modifiedAt: number; source: string; parsed: Template[] }>();
  private chars = 0;

  constructor(
    private readonly maxEntries = 2_000,
    private readonly maxChars = 8_000_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The parsed template of `source`, saved as template `id`'s `field` at `modifiedAt`. */
  get(id: string, field: string, modifiedAt: Date, source: string): Template[] {
    const key = `${id} ${field}`;
    const at = modifiedAt.getTime();
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.chars -= hit.source.length;
      if (hit.modifiedAt === at && hit.source === source) {
        this.entries.set(key, hit); // most recently used last
        this.chars += hit.source.length;
        return hit.parsed;
      }
    }
    const parsed = liquid.parse(source);
    this.entries.set(key, { modifiedAt: at, source, parsed });
    this.chars += source.length;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.chars <= this.maxChars) break;
      this.entries.delete(k);
      this.chars -= e.source.length;
    }
    return parsed;
  }
}

export const parsedTemplates = new ParsedTemplateCache();

/**
 * Render a saved template (already validated) against a context, parsing it at most once per
 * (id, modified_at) (see ParsedTemplateCache). Rendered synchronously: outreach templates read no
 * files and call no async filters, and the engine's render-time limit still applies.
 */
export function renderSavedTemplate(t: { id: string; modified_at: Date }, field: 'subject' | 'body', source: string, context: TemplateContext, cache = parsedTemplates): string {
  try {
    return liquid.renderSync(cache.get(t.id, field, t.modified_at, source), context) as string;
  } catch (err) {
    throw renderError(field, err);
  }
}
