import { z } from 'zod';

/** Query-string integer: digits only (with an optional minus, so "-1" is reported as out of range). */
export function queryInt(opts: { min?: number; max?: number; description?: string } = {}) {
  let n = z.number().int();
  if (opts.min !== undefined) n = n.min(opts.min);
  if (opts.max !== undefined) n = n.max(opts.max);
  const schema = z
    .string()
    .regex(/^-?\d+$/, 'must be an integer')
    .transform(Number)
    .pipe(n);
  return opts.description ? schema.describe(opts.description) : schema;
}

/** Highest page number accepted (a bound for clients and fuzzers; far beyond any real listing). */
export const MAX_PAGE_NUMBER = 1_000_000;

/**
 * A calendar date `YYYY-MM-DD` (a real day: no 2026-02-30), in a query string or a body; documented
 * as `format: date`.
 */
export function isoDate(message = 'must be a calendar date YYYY-MM-DD') {
  return z.iso.date({ message });
}

/**
 * Pagination query parameters per DESIGN §3: `page` (>= 0, default 0) and `page_size` (default 50,
 * capped per endpoint); `size` is accepted as an alias of `page_size`.
 */
export function paginationQueryShape(maxPageSize: number, defaultPageSize = Math.min(50, maxPageSize)) {
  const size = () =>
    queryInt({ min: 1, max: maxPageSize, description: `Page size, 1..${maxPageSize} (default ${defaultPageSize}).` }).optional();
  return {
    page: queryInt({ min: 0, max: MAX_PAGE_NUMBER, description: 'Page number, 0-indexed (default 0).' }).optional(),
    page_size: size(),
    size: size().describe(`Alias of page_size, 1..${maxPageSize}.`),
  };
}

export interface PageRequest {
  page: number;
  pageSize: number;
  offset: number;
}

export function pageRequest(
  query: { page?: number; page_size?: number; size?: number },
  maxPageSize: number,
  defaultPageSize = Math.min(50, maxPageSize),
): PageRequest {
  const page = query.page ?? 0;
  const pageSize = query.page_size ?? query.size ?? defaultPageSize;
  return { page, pageSize, offset: page * pageSize };
}

export interface Page<T> {
  data: T[];
  current_page: number;
  total_records: number;
  next_page: number | null;
}

export function pageOf<T>(data: T[], total: number, req: PageRequest): Page<T> {
  return {
    data,
    current_page: req.page,
    total_records: total,
    next_page: (req.page + 1) * req.pageSize < total ? req.page + 1 : null,
  };
}

const envelopes = new WeakMap<z.ZodType, z.ZodType>();

/**
 * The page envelope of `item`: a named component `<Item>Page` when the item schema is named
 * (`.meta({ id })`), one schema instance per item.
 */
export function pageEnvelopeSchema<T extends z.ZodType>(item: T) {
  const known = envelopes.get(item);
  if (known) return known as ReturnType<typeof envelopeOf<T>>;
  const id = z.globalRegistry.get(item)?.id;
  const envelope = envelopeOf(item);
  const named = typeof id === 'string' ? envelope.meta({ id: `${id}Page`, description: `A page of ${id} records.` }) : envelope;
  envelopes.set(item, named);
  return named;
}

function envelopeOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    current_page: z.number().int().min(0),
    total_records: z.number().int().min(0),
    next_page: z.number().int().min(1).nullable(),
  });
}

/** `created_at` / `modified_at` of every record (DESIGN §3): ISO 8601 UTC with Z. */
export const timestampsShape = {
  created_at: z.string().describe('ISO 8601 UTC'),
  modified_at: z.string().describe('ISO 8601 UTC'),
};
