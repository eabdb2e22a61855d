/**
 * QuickBooks Online pull adapter (Intuit Accounting API v3: query and change data capture).
 *
 *   GET {apiBaseUrl}/v3/company/{realmId}/query?query=<statement>&minorversion=75
 *   GET {apiBaseUrl}/v3/company/{realmId}/cdc?entities=<Entity>&changedSince=<time>&minorversion=75
 *   Authorization: Bearer <access token>, Accept: application/json
 *
 * Identity: every record is keyed by QuickBooks' own entity `Id` (documents: remote_id = Id, per
 * kind; customers: partner remote_id = Id), never by DocNumber or TxnDate, so an edited number or
 * date updates the same ledger row.
 *
 * Reads (keyset, never STARTPOSITION offsets: an offset over a set that changes while it is read
 * skips records): `SELECT * FROM <Entity> [WHERE MetaData.LastUpdatedTime >= '<since>']
 * ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS <m>`. `since` is the LastUpdatedTime of the last
 * record read (verbatim as QuickBooks sent it) and the pagination state remembers the Ids already
 * read at exactly that time (`seen`); the next page asks for `page size + seen` rows from `since` on
 * and drops the seen ones (QuickBooks' query language has no OR, so "(time, Id) > (t, id)" cannot be
 * written). A record changed while the sync pages gets a later LastUpdatedTime and is read at its
 * new place; an inserted one likewise; a deleted one cannot shift the others. There is no upper time
 * bound: the read runs until a page is short. A page with fewer rows than asked for is the last.
 * QuickBooks answers at most 1,000 rows per query: once more than 900 records read share one
 * LastUpdatedTime (a bulk import or a company converted from Desktop), the rest of that second is
 * read by Id instead (`MetaData.LastUpdatedTime = '<since>' AND Id > '<after_id>' ORDERBY Id`, Ids
 * compare numerically), then the read continues after it (`MetaData.LastUpdatedTime > '<since>'`).
 *
 * Modes (fixed on a run's first page and kept in its pagination state):
 * - `full`: an initial sync (no window start) or a window starting more than 29 days ago (CDC looks
 *   back 30 days at most): no lower bound. For invoices and credit memos its last page carries a
 *   `sweep`: documents of the connection the run did not write are gone from QuickBooks and are
 *   closed.
 * - `incremental`: from the window start minus 5 minutes (Intuit stamps LastUpdatedTime with its
 *   own clock); invoices and credit memos first call CDC once (`phase: changes`) for deletions since
 *   then: entries with `status: "Deleted"` close their documents. CDC answers at most 1,000 objects:
 *   a full answer may have lost deletions, so the run switches to a `full` read (with its sweep).
 *   Customers have no deletion step: QuickBooks does not delete customers, it makes them inactive
 *   (attributes.active).
 *
 * Responses: query `{QueryResponse: {<Entity>: [...], startPosition, maxResults}, time}` (an empty
 * result is `{QueryResponse: {}}`); CDC `{CDCResponse: [{QueryResponse: [{<Entity>: [...]}, ...]}], time}`.
 * Errors are `{Fault: {Error: [{Message, Detail, code}], type}}`:
 * 401 → authentication_required, 429 → rate_limited (retried), 5xx → server_error (retried),
 * other 4xx → rejected.
 *
 * Amounts arrive as JSON numbers; the adapter reads them from the response text as decimal
 * strings (never through a float) and the ledger stores them as NUMERIC.
 *
 * Mapping (also in the OpenAPI description of POST .../sync):
 * - Customer → partner: remote_id = Id, name = DisplayName, legal_name = CompanyName,
 *   email = PrimaryEmailAddr.Address, phone = PrimaryPhone.FreeFormNumber, currency = CurrencyRef.value,
 *   address = BillAddr (line1..line5, city, region = CountrySubDivisionCode, postal_code, country),
 *   attributes = {given_name, family_name, active, qbo_balance, sync_token}.
 * - Invoice → document kind invoice, CreditMemo → kind credit_memo: remote_id = Id,
 *   company_code = realmId (credit memos: `<realmId>:credit_memo`, because QuickBooks numbers invoices and
 *   credit memos apart and the same DocNumber on both must not make one overwrite the other),
 *   fiscal_year = year of TxnDate, document_number = DocNumber or Id,
 *   document_date = TxnDate, net_due_date = DueDate (credit memos: TxnDate),
 *   amount_in_document_currency = TotalAmt, amount_open = Balance, status_open = Balance > 0
 *   (a voided invoice, which QuickBooks keeps with TotalAmt and Balance 0 and PrivateNote "Voided",
 *   is therefore closed; a PrivateNote starting with "Voided" closes it even if a Balance remained),
 *   currency = CurrencyRef.value, customer_code = CustomerRef.value (links the partner),
 *   exchange_rate = ExchangeRate, text = PrivateNote, reference = CustomerMemo.value;
 *   line items = the SalesItemLineDetail lines (line_number = LineNum or position, description,
 *   quantity = Qty, unit_amount = UnitPrice, total_amount = Amount); subtotal/discount lines are skipped.
 */
import { ProviderApiError, type DocumentKind, type PaginationState, type ProviderAccess, type PullAdapter, type PulledPage, type SyncWindow } from './adapter.js';
import { mapCustomer, mapTransaction, type QboCustomer, type QboTransaction } from './quickbooks-online-mapping.js';
import { qboGet } from './quickbooks-online-http.js';

export { mapCustomer, mapTransaction } from './quickbooks-online-mapping.js';
export { parseQboJson, qboGet, QBO_MINOR_VERSION } from './quickbooks-online-http.js';

/**
 * An incremental query starts this much before timerange_start: Intuit stamps LastUpdatedTime
 * with its own clock, so a change stamped just before our window's end may only become visible
 * after that window was read. Re-reading the overlap is harmless (upserts by key).
 */
export const QBO_INCREMENTAL_OVERLAP_MS = 5 * 60 * 1000;
export const QBO_PAGE_SIZE = 100;
/** QuickBooks answers at most this many rows per query and this many objects per CDC response. */
export const QBO_MAX_RESULTS = 1000;
export const QBO_CDC_MAX_OBJECTS = 1000;
/** CDC looks back 30 days; a window starting further back than this is read in full instead. */
export const QBO_CDC_LOOKBACK_MS = 29 * 24 * 3600 * 1000;

const ENTITY_BY_MODEL: Record<string, 'Customer' | 'Invoice' | 'CreditMemo'> = {
  customers: 'Customer',
  invoices: 'Invoice',
  credit_memos: 'CreditMemo',
};

/**
 * The query statement for one page (exported for tests and logs): every record changed at or after
 * `since` (all records when null), oldest change first, ties by Id.
 */
export function qboQuery(entity: string, since: string | null, maxResults: number, strictlyAfter = false): string {
  const where = since ? ` WHERE MetaData.LastUpdatedTime ${strictlyAfter ? '>' : '>='} '${since.replace(/'/g, '')}'` : '';
  return `SELECT * FROM ${entity}${where} ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS ${maxResults}`;
}

/** Where an incremental read of the window starts: its start minus the overlap, as a QBO DateTime literal. */
export function qboIncrementalSince(window: SyncWindow): string | null {
  return window.start ? qboTime(new Date(Date.parse(window.start) - QBO_INCREMENTAL_OVERLAP_MS).toISOString()) : null;
}

/** ISO 8601 with an explicit UTC offset, as QBO's DateTime literals expect. */
export function qboTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw new Error(`not a time: ${iso}`);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/Z$/, '+00:00');
}

function realmOf(access: ProviderAccess): string {
  if (!access.realmId) throw new ProviderApiError('misconfigured', 'The connection has no QuickBooks company (realmId); authenticate it again.');
  return access.realmId;
}

/** A run's pagination state (stored with each page, heartbeated, shown in the sync run). */
export interface QboPaginationState {
  mode: 'full' | 'incremental';
  /** `changes`: the CDC deletion step (incremental invoices and credit memos), then `query`. */
  phase: 'changes' | 'query';
  /** LastUpdatedTime of the last record read (as QuickBooks sent it); null: from the beginning. */
  since: string | null;
  /** Ids already read whose LastUpdatedTime is exactly `since`. */
  seen: string[];
  max_results: number;
  /** Present while the rest of the `since` second is read by Id (too many records share it): the last Id read. */
  after_id?: string;
  /** Present (true) when the next page starts strictly after `since` (that second is read completely). */
  strict?: boolean;
  [key: string]: unknown;
}

function instant(t: string | null | undefined): number {
  const n = t ? Date.parse(t) : NaN;
  return n;
}

/** The run's first state, from its window (exported for tests). */
export function qboStartState(entity: string, window: SyncWindow, maxResults: number, now = Date.now()): QboPaginationState {
  const since = qboIncrementalSince(window);
  const full = since === null || now - Date.parse(since) > QBO_CDC_LOOKBACK_MS;
  if (full) return { mode: 'full', phase: 'query', since: null, seen: [], max_results: maxResults };
  return { mode: 'incremental', phase: entity === 'Customer' ? 'query' : 'changes', since, seen: [], max_results: maxResults };
}

function readState(raw: PaginationState, entity: string, window: SyncWindow): QboPaginationState {
  const maxResults = Math.min(Math.max(1, Number(raw.max_results ?? QBO_PAGE_SIZE)), QBO_MAX_RESULTS);
  if (raw.mode !== 'full' && raw.mode !== 'incremental') return qboStartState(entity, window, maxResults);
  const state: QboPaginationState = {
    mode: raw.mode,
    phase: raw.phase === 'changes' ? 'changes' : 'query',
    since: typeof raw.since === 'string' ? raw.since : null,
    seen: Array.isArray(raw.seen) ? raw.seen.map(String) : [],
    max_results: maxResults,
  };
  if (typeof raw.after_id === 'string' && state.since) state.after_id = raw.after_id;
  if (raw.strict === true && state.since) state.strict = true;
  return state;
}

/** The query of the rest of one LastUpdatedTime second, by Id. */
export function qboTieQuery(entity: string, since: string, afterId: string, maxResults: number): string {
  return `SELECT * FROM ${entity} WHERE MetaData.LastUpdatedTime = '${since.replace(/'/g, '')}' AND Id > '${afterId.replace(/'/g, '')}' ORDERBY Id MAXRESULTS ${maxResults}`;
}

function without(state: QboPaginationState, key: 'after_id' | 'strict'): QboPaginationState {
  const copy = { ...state };
  delete copy[key];
  return copy;
}

function maxId(ids: readonly string[]): string {
  return ids.reduce((a, b) => (compareIds(a, b) >= 0 ? a : b));
}

function compareIds(a: string, b: string): number {
  const [x, y] = [Number(a), Number(b)];
  if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

async function queryItems(access: ProviderAccess, realmId: string, entity: string, query: string, signal?: AbortSignal): Promise<(QboCustomer | QboTransaction)[]> {
  const body = (await qboGet(access, `/v3/company/${encodeURIComponent(realmId)}/query`, { query }, signal)) as { QueryResponse?: Record<string, unknown> };
  const qr = body.QueryResponse;
  if (!qr || typeof qr !== 'object') throw new ProviderApiError('server_error', 'QuickBooks Online answered without a QueryResponse.');
  const items = (qr[entity] ?? []) as (QboCustomer | QboTransaction)[];
  if (!Array.isArray(items)) throw new ProviderApiError('server_error', `QuickBooks Online answered a non-array ${entity}.`);
  for (const i of items) {
    if (Number.isNaN(instant(i.MetaData?.LastUpdatedTime))) throw new ProviderApiError('rejected', `QuickBooks ${entity} ${i.Id} has no valid MetaData.LastUpdatedTime.`);
  }
  return items;
}

const EMPTY_DOCUMENTS = { type: 'documents' as const, rows: [] };

/** The CDC step: which of the entity's records QuickBooks deleted since the window start (minus the overlap). */
async function fetchDeletions(access: ProviderAccess, realmId: string, entity: string, kind: DocumentKind, state: QboPaginationState, signal?: AbortSignal): Promise<PulledPage> {
  const body = (await qboGet(access, `/v3/company/${encodeURIComponent(realmId)}/cdc`, { entities: entity, changedSince: state.since! }, signal)) as {
    CDCResponse?: { QueryResponse?: Record<string, unknown>[] }[];
  };
  if (!Array.isArray(body.CDCResponse)) throw new ProviderApiError('server_error', 'QuickBooks Online answered the change data capture without a CDCResponse.');
  const objects: { Id?: unknown; status?: unknown }[] = [];
  for (const r of body.CDCResponse) {
    for (const qr of r?.QueryResponse ?? []) {
      const list = qr?.[entity];
      if (Array.isArray(list)) objects.push(...(list as { Id?: unknown; status?: unknown }[]));
    }
  }
  const afterChanges: QboPaginationState = { ...state, phase: 'query' };
  // A full answer may have left changes (deletions among them) out: read everything instead.
  if (objects.length >= QBO_CDC_MAX_OBJECTS) return { records: EMPTY_DOCUMENTS, next: { ...afterChanges, mode: 'full', since: null, seen: [] } };
  const remoteIds = objects.filter((o) => o.status === 'Deleted' && o.Id !== undefined && o.Id !== null).map((o) => String(o.Id));
  return { records: EMPTY_DOCUMENTS, deletions: { kind, remoteIds }, next: afterChanges };
}

export const quickbooksOnlineAdapter: PullAdapter = {
  providerName: 'quickbooks_online',
  models: [
    { name: 'customers', display_name: 'Customers' },
    { name: 'invoices', display_name: 'Invoices' },
    { name: 'credit_memos', display_name: 'Credit memos' },
  ],
  initialState: () => ({ max_results: QBO_PAGE_SIZE }),
  async fetchPage(access: ProviderAccess, model: string, window: SyncWindow, raw: PaginationState, opts: { signal?: AbortSignal }): Promise<PulledPage> {
    const entity = ENTITY_BY_MODEL[model];
    if (!entity) throw new ProviderApiError('misconfigured', `QuickBooks Online has no model "${model}".`);
    const realmId = realmOf(access);
    const kind: DocumentKind | null = entity === 'Invoice' ? 'invoice' : entity === 'CreditMemo' ? 'credit_memo' : null;
    const state = readState(raw, entity, window);
    if (state.phase === 'changes' && kind) return fetchDeletions(access, realmId, entity, kind, state, opts.signal);

    let fresh: (QboCustomer | QboTransaction)[];
    let next: QboPaginationState | null;
    const page = state.max_results;
    if (state.after_id === undefined && state.since && !state.strict && page + state.seen.length > QBO_MAX_RESULTS) {
      // Too many records share the `since` second to ask for them again: read the rest of it by Id.
      state.after_id = maxId(state.seen);
    }
    if (state.after_id !== undefined && state.since) {
      const items = await queryItems(access, realmId, entity, qboTieQuery(entity, state.since, state.after_id, page), opts.signal);
      fresh = items.filter((i) => compareIds(String(i.Id), state.after_id!) > 0);
      // That second is read completely once a page is short: continue strictly after it.
      next = items.length >= page ? { ...state, seen: [], after_id: String(items[items.length - 1]!.Id) } : { ...without(state, 'after_id'), seen: [], strict: true };
    } else {
      const limit = page + (state.strict ? 0 : state.seen.length);
      const items = await queryItems(access, realmId, entity, qboQuery(entity, state.since, limit, state.strict), opts.signal);
      const sinceAt = state.strict ? NaN : instant(state.since);
      const seen = new Set(state.seen);
      fresh = items.filter((i) => !(instant(i.MetaData!.LastUpdatedTime) === sinceAt && seen.has(String(i.Id))));
      next = null;
      if (items.length >= limit) {
        const last = items[items.length - 1]!.MetaData!.LastUpdatedTime!;
        const lastAt = instant(last);
        const atLast = items.filter((i) => instant(i.MetaData!.LastUpdatedTime) === lastAt).map((i) => String(i.Id));
        next = { ...without(state, 'strict'), since: last, seen: lastAt === sinceAt ? [...new Set([...state.seen, ...atLast])] : [...new Set(atLast)] };
      }
    }
    if (!kind) return { records: { type: 'partners', rows: (fresh as QboCustomer[]).map(mapCustomer) }, next };
    const pulled: PulledPage = { records: { type: 'documents', rows: (fresh as QboTransaction[]).map((t) => mapTransaction(t, kind, realmId, null)) }, next };
    if (!next && state.mode === 'full') pulled.sweep = { kind };
    return pulled;
  },
};

