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
 *   totals              per currency, never one sum across currencies (kernel currency-totals.ts):
 *     totals.by_currency[]  one per currency (by code): currency, open_amount, overdue_amount,
 *                           open_count, overdue_count; amounts in that currency's minor units
 *     totals.base           the organization's base currency: currency, open_amount, overdue_amount
 *                           (converted with the latest stored rate on or before today; null when a
 *                           currency has none), complete, missing_currencies[], rates[] (currency,
 *                           rate = base units per unit, rate_date, pair)
 *     totals.open_amount, totals.overdue_amount, totals.currency: one printable figure: the sum when
 *       all invoices share one currency, else the converted base figure when every currency has a
 *       rate, else null (then print totals.by_currency)
 *     totals.open_count, totals.overdue_count, totals.max_days_overdue
 *   sender.name, sender.email     the user sending (the caller, in previews)
 *   organization.name, organization.base_currency
 *   payment.amount, payment.currency, payment.date (YYYY-MM-DD or null), payment.reference (or null):
 *     the payment a receipt confirms (cash-app's payment receipt, whose `invoices` are the invoices
 *     the payment paid); previews carry a sample payment
 *   today               YYYY-MM-DD in the organization's timezone
 *   action              the collection action an email or SMS of a run belongs to (previews and
 *                       other emails carry a sample): action.step {index (0-based), offset_days,
 *                       channel}, action.invoices[] the invoices it chases {number, document_date,
 *                       due_date, currency, amount_open, days_overdue} (days past due on the run's date)
 * Inside `{% for invoice in invoices %}` the loop variable has the invoice fields. Invoice amounts are
 * decimal strings with their currency's minor units (JPY "1190", EUR "1190.00").
 *
 * Renders run on the kernel's template pool (worker threads), never on the API's event loop.
 */
import type { Template } from 'liquidjs';
import { createTemplateEngine, customerTotals, liquidErrorPosition, formatInMinorUnits, ValidationError, type CustomerTotals, type RateToBase, type TemplatePool, type TemplateRenderOutcome, type ValidationIssue } from '@rp/platform';

const ACTION_INVOICE_FIELDS = ['number', 'document_date', 'due_date', 'currency', 'amount_open', 'days_overdue'] as const;
const INVOICE_FIELDS = ['number', 'document_date', 'due_date', 'currency', 'amount', 'amount_open', 'days_overdue', 'is_overdue'] as const;

/** The shape of a variable: a scalar, an object with named fields, or an array of items. */
type Shape = { kind: 'scalar' } | { kind: 'object'; fields: Readonly<Record<string, Shape>> } | { kind: 'array'; item: Shape };

const scalar = { kind: 'scalar' } as const;
const objectOf = (fields: Record<string, Shape>): Shape => ({ kind: 'object', fields });
const scalars = (names: readonly string[]): Shape => objectOf(Object.fromEntries(names.map((n) => [n, scalar])));
const arrayOf = (item: Shape): Shape => ({ kind: 'array', item });

/** What a template may read (see the module comment). */
export const VARIABLE_CATALOGUE: Readonly<Record<string, Shape>> = {
  customer: scalars(['name', 'legal_name', 'account_number', 'email', 'phone']),
  invoices: arrayOf(scalars(INVOICE_FIELDS)),
  overdue_invoices: arrayOf(scalars(INVOICE_FIELDS)),
  totals: objectOf({
    ...Object.fromEntries(['open_amount', 'overdue_amount', 'currency', 'open_count', 'overdue_count', 'max_days_overdue'].map((n) => [n, scalar])),
    by_currency: arrayOf(scalars(['currency', 'open_amount', 'overdue_amount', 'open_count', 'overdue_count'])),
    base: objectOf({
      ...Object.fromEntries(['currency', 'open_amount', 'overdue_amount', 'complete'].map((n) => [n, scalar])),
      missing_currencies: arrayOf(scalar),
      rates: arrayOf(scalars(['currency', 'rate', 'rate_date', 'pair'])),
    }),
  }),
  sender: scalars(['name', 'email']),
  organization: scalars(['name', 'base_currency']),
  payment: scalars(['amount', 'currency', 'date', 'reference']),
  today: scalar,
  action: objectOf({
    step: scalars(['index', 'offset_days', 'channel']),
    invoices: arrayOf(scalars(ACTION_INVOICE_FIELDS)),
  }),
};

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
  totals: CustomerTotals;
  sender: { name: string; email: string };
  organization: { name: string; base_currency: string };
  /** the payment a receipt confirms; previews and collection emails carry the sample payment */
  payment: { amount: string; currency: string; date: string | null; reference: string | null };
  today: string;
  /** the collection action (a run's email or SMS); a sample elsewhere */
  action: ActionContext;
}

export interface ActionContext {
  step: { index: number; offset_days: number; channel: 'email' | 'sms' | 'task' };
  invoices: { number: string; document_date: string | null; due_date: string | null; currency: string; amount_open: string; days_overdue: number }[];
}

/** The sample action of previews and of emails that are not a run's: the first step, chasing the given invoices. */
export function sampleAction(invoices: readonly TemplateInvoice[]): ActionContext {
  return {
    step: { index: 0, offset_days: 7, channel: 'email' },
    invoices: invoices.filter((i) => i.is_overdue).map((i) => ({ number: i.number, document_date: i.document_date, due_date: i.due_date, currency: i.currency, amount_open: i.amount_open, days_overdue: i.days_overdue })),
  };
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
  ].map((i) => ({ ...i, amount: formatInMinorUnits(i.amount, i.currency), amount_open: formatInMinorUnits(i.amount_open, i.currency) }));
  return {
    customer: { name: 'Sample Customer GmbH', legal_name: 'Sample Customer GmbH', account_number: 'C-0001', email: 'ap@sample-customer.example', phone: '+49 30 1234567' },
    invoices,
    overdue_invoices: invoices.filter((i) => i.is_overdue),
    totals: customerTotals(invoices, org.base_currency, new Map()),
    sender,
    organization: org,
    payment: samplePayment(org.base_currency, today),
    today,
    action: sampleAction(invoices),
  };
}

/**
 * The sample customer with one more invoice in a second currency (JPY, or EUR when JPY is the base)
 * and a rate for it: saved templates are also checked against it, so a loop over
 * `totals.by_currency` or `totals.base.rates` cannot read a field that does not exist.
 */
export function multiCurrencySampleContext(org: { name: string; base_currency: string }, sender: { name: string; email: string }, today: string): TemplateContext {
  const single = sampleContext(org, sender, today);
  const other = org.base_currency === 'JPY' ? 'EUR' : 'JPY';
  const extra: TemplateInvoice = { number: 'INV-1004', document_date: '2026-02-01', due_date: '2026-03-03', currency: other, amount: formatInMinorUnits('150000', other), amount_open: formatInMinorUnits('150000', other), days_overdue: 18, is_overdue: true };
  const invoices = [...single.invoices.slice(0, 2), extra, ...single.invoices.slice(2)];
  const rate: RateToBase = { currency: other, rate: other === 'JPY' ? '0.0062' : '160', rate_date: today, pair: `${other}/${org.base_currency}` };
  return { ...single, invoices, overdue_invoices: invoices.filter((i) => i.is_overdue), totals: customerTotals(invoices, org.base_currency, new Map([[other, rate]])) };
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

/** Is `segments` a path of `shape`? (array items by index, or first/last; `size` of arrays and strings). */
function knownIn(shape: Shape, segments: readonly (string | number)[]): boolean {
  const [head, ...rest] = segments;
  if (head === undefined) return true;
  if (shape.kind === 'scalar') return head === 'size' && rest.length === 0;
  if (shape.kind === 'object') return typeof head === 'string' && Object.hasOwn(shape.fields, head) && knownIn(shape.fields[head]!, rest);
  if (head === 'size') return rest.length === 0;
  return (typeof head === 'number' || head === 'first' || head === 'last') && knownIn(shape.item, rest);
}

/** Is `segments` a path the catalogue knows? */
function known(segments: readonly (string | number)[]): boolean {
  const [head, ...rest] = segments;
  return typeof head === 'string' && Object.hasOwn(VARIABLE_CATALOGUE, head) && knownIn(VARIABLE_CATALOGUE[head]!, rest);
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
 * also in branches that a sample would not take) and render, on the template pool, against each
 * sample (the sample customer and its multi-currency variant) in strict mode (which also checks
 * the fields of loop variables). With `autoCorrect`, variable paths that differ from a catalogue
 * path only by case, camelCase or hyphens are rewritten to it first. Throws a 422 naming the field,
 * line and column (503 TemplatePoolBusyError when the pool is full).
 */
export async function checkTemplate(pool: TemplatePool, field: string, source: string, autoCorrect: boolean, samples: readonly TemplateContext[]): Promise<CheckedTemplate> {
  const corrections: string[] = [];
  let globals: ReturnType<typeof liquid.analyzeSync>['globals'];
  try {
    // include/render/layout name files, and there are none: liquidjs fails them while parsing or
    // analysing (ENOENT), which is the template's error, not ours.
    if (/\{%-?\s*(include|render|layout)\b/.test(source)) throw new Error('include, render and layout are not available in templates');
    const parsed: Template[] = liquid.parse(source);
    globals = liquid.analyzeSync(parsed).globals;
  } catch (err) {
    throw new ValidationError([issue(field, cleanMessage(err), liquidErrorPosition(err), 'liquid_syntax')], `The ${field} is not valid Liquid: ${(err as Error).message}`);
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
  for (const sample of samples) {
    const r = await pool.render(fixed, sample);
    if (!r.ok) throw new ValidationError([outcomeIssue(field, r)], `The ${field} does not render: ${r.message}`);
  }
  return { source: fixed, corrections };
}

/** The issue of a failed render: the engine's message (without its position suffix), at its line and column. */
function outcomeIssue(field: string, r: Extract<TemplateRenderOutcome, { ok: false }>): ValidationIssue {
  return issue(field, cleanMessage(new Error(r.message)), r.position, 'liquid_render');
}

/**
 * Render a saved template (already validated) against a context on the template pool; a thread
 * reuses the parsed template while its modified_at and text are unchanged (the kernel's
 * ParsedTemplateCache). A render that fails or exceeds the time limit is a 422 naming the field
 * (a saved template renders the sample, but real data can still exceed a limit, e.g. many invoices).
 */
/**
 * The fields of a saved template rendered against one context in one operation on the pool (see
 * renderSavedTemplate): the first field that fails is the 422, named as renderSavedTemplate names it.
 */
export async function renderSavedTemplateFields<F extends 'subject' | 'body'>(
  pool: TemplatePool,
  t: { id: string; modified_at: Date },
  fields: readonly (readonly [F, string])[],
  context: TemplateContext,
): Promise<Record<F, string>> {
  const modifiedAt = t.modified_at.getTime();
  const outcomes = await pool.renderAll(
    fields.map(([field, source]) => ({ source, cacheKey: { id: t.id, field, modifiedAt } })),
    context,
  );
  const rendered = {} as Record<F, string>;
  fields.forEach(([field], i) => {
    const r = outcomes[i]!;
    if (!r.ok) throw new ValidationError([outcomeIssue(field, r)], `The ${field} does not render for this customer: ${r.message}`);
    rendered[field] = r.output;
  });
  return rendered;
}

export async function renderSavedTemplate(pool: TemplatePool, t: { id: string; modified_at: Date }, field: 'subject' | 'body', source: string, context: TemplateContext): Promise<string> {
  const r = await pool.render(source, context, { id: t.id, field, modifiedAt: t.modified_at.getTime() });
  if (r.ok) return r.output;
  throw new ValidationError([outcomeIssue(field, r)], `The ${field} does not render for this customer: ${r.message}`);
}
