/**
 * A local QuickBooks Online on loopback, following Intuit's documented shapes:
 * - Accounting API query: `GET /v3/company/{realmId}/query?query=<statement>&minorversion=N`,
 *   `Authorization: Bearer`, `{QueryResponse: {<Entity>: [...], startPosition, maxResults}, time}`,
 *   an empty result `{QueryResponse: {}, time}`; faults `{Fault: {Error: [{Message, Detail, code}], type}, time}`.
 *   The statement supports what the adapter sends: `SELECT * FROM <Entity> [WHERE <cond> [AND <cond>]]
 *   [ORDERBY <property>[, <property>]] [STARTPOSITION n] [MAXRESULTS m]` with conditions on
 *   `MetaData.LastUpdatedTime` and `Id` (compared numerically) and ordering by `MetaData.LastUpdatedTime`
 *   and/or `Id` (ascending; Id numerically).
 *   The result is computed when the request is answered, so records changed while a request is held
 *   (see `block`) are answered as they are then, as QuickBooks would.
 * - Change data capture: `GET /v3/company/{realmId}/cdc?entities=<A,B>&changedSince=<dateTime>`,
 *   `{CDCResponse: [{QueryResponse: [{<Entity>: [...], startPosition, maxResults}, ...]}], time}`: the
 *   full payload of every record changed at or after changedSince and, for a deleted record,
 *   `{domain: 'QBO', status: 'Deleted', Id, MetaData: {LastUpdatedTime}}`. At most 1,000 objects per
 *   response (the first 1,000 by change time); changedSince more than 30 days back is refused (400).
 * - `GET /v3/company/{realmId}/companyinfo/{realmId}` (health checks).
 * - OAuth 2.0 token endpoint `POST /oauth2/v1/tokens/bearer` (authorization_code and refresh_token grants).
 *
 * Test controls: the records, `remove(entity, id)` (a deletion CDC reports), the valid access token,
 * request logs (queries, cdc requests), forced statuses, and `block(entity, startPosition | match)` to hold
 * one query's response until released.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type QboEntity = 'Customer' | 'Invoice' | 'CreditMemo';

export interface QboRecord {
  Id: string;
  MetaData: { CreateTime: string; LastUpdatedTime: string };
  [key: string]: unknown;
}

export interface QueryRequest {
  entity: string;
  statement: string;
  /** the ORDERBY properties, e.g. ['MetaData.LastUpdatedTime', 'Id'] */
  orderBy: string[];
  startPosition: number;
  maxResults: number;
  since: string | null;
  until: string | null;
  authorization: string | undefined;
  minorversion: string | null;
}

export interface CdcRequest {
  entities: string[];
  changedSince: string;
  minorversion: string | null;
}

export interface PageBlock {
  /** resolves when the blocked request has arrived */
  reached: Promise<void>;
  /** let the held request (if still connected) be answered, and stop blocking */
  release(): void;
}

export interface FakeQuickbooks {
  url: string;
  realmId: string;
  /** the access tokens the API accepts (the token endpoint adds one per grant) */
  accessTokens: Set<string>;
  records: Record<QboEntity, QboRecord[]>;
  queries: QueryRequest[];
  cdcRequests: CdcRequest[];
  /** deleted records (what CDC reports with status Deleted): entity → Id → deletion time */
  deleted: Record<QboEntity, Map<string, string>>;
  tokenRequests: URLSearchParams[];
  /** answer every API call with this status and a Fault body (null: normal) */
  forceStatus: number | null;
  /** the code the token endpoint accepts */
  authorizationCode: string;
  /** hold the first query of `entity` at this start position (or matching this predicate) until released */
  block(entity: QboEntity, at: number | ((q: QueryRequest) => boolean)): PageBlock;
  /** delete a record as a QuickBooks user would: gone from queries, reported by CDC as Deleted (at `at`, default now) */
  remove(entity: QboEntity, id: string, at?: string): void;
  queriesFor(entity: QboEntity): QueryRequest[];
  close(): Promise<void>;
}

function fault(res: http.ServerResponse, status: number, type: string, message: string, code: string, detail = message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ Fault: { Error: [{ Message: message, Detail: detail, code }], type }, time: new Date().toISOString() }));
}

const STATEMENT_RE = /^SELECT \* FROM (\w+)(?: WHERE (.+?))?(?: ORDERBY ([\w.]+(?:\s*,\s*[\w.]+)*))?(?: STARTPOSITION (\d+))?(?: MAXRESULTS (\d+))?$/i;
const CONDITION_RE = /^Metadata\.LastUpdatedTime\s*(>=|>|<=|<|=)\s*'([^']+)'$/i;
const ID_CONDITION_RE = /^Id\s*(>=|>|<=|<|=)\s*'(\d+)'$/i;
const ORDER_KEYS: Record<string, (r: QboRecord) => number> = {
  'metadata.lastupdatedtime': (r) => Date.parse(r.MetaData.LastUpdatedTime),
  id: (r) => Number(r.Id),
};
const CDC_MAX_OBJECTS = 1000;
const CDC_LOOKBACK_MS = 30 * 24 * 3600 * 1000;

export async function startFakeQuickbooks(opts: { realmId?: string } = {}): Promise<FakeQuickbooks> {
  const blocks: { entity: string; match: (q: QueryRequest) => boolean; arrived: () => void; released: boolean; waiters: (() => void)[] }[] = [];
  const fake = {
    url: '',
    realmId: opts.realmId ?? '9130357766123456',
    accessTokens: new Set<string>(),
    authorizationCode: 'qbo-auth-code',
    records: { Customer: [], Invoice: [], CreditMemo: [] } as Record<QboEntity, QboRecord[]>,
    queries: [] as QueryRequest[],
    cdcRequests: [] as CdcRequest[],
    deleted: { Customer: new Map(), Invoice: new Map(), CreditMemo: new Map() } as Record<QboEntity, Map<string, string>>,
    tokenRequests: [] as URLSearchParams[],
    forceStatus: null as number | null,
  } as FakeQuickbooks;
  let tokenSerial = 1;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((err: Error) => {
        if (!res.headersSent) fault(res, 500, 'SystemFault', err.message, '10000');
      });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/oauth2/v1/tokens/bearer') {
      const form = new URLSearchParams(body);
      fake.tokenRequests.push(form);
      const grant = form.get('grant_type');
      if ((grant === 'authorization_code' && form.get('code') === fake.authorizationCode) || grant === 'refresh_token') {
        const accessToken = `qbo-access-token-${++tokenSerial}`;
        fake.accessTokens.add(accessToken);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            token_type: 'bearer',
            access_token: accessToken,
            refresh_token: `qbo-refresh-token-${tokenSerial}`,
            expires_in: 3600,
            x_refresh_token_expires_in: 8726400,
          }),
        );
        return;
      }
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'invalid_grant' }));
      return;
    }
    const m = url.pathname.match(/^\/v3\/company\/([^/]+)\/(query|cdc|companyinfo\/[^/]+)$/);
    if (req.method !== 'GET' || !m) {
      fault(res, 404, 'ValidationFault', 'Resource not found', '610');
      return;
    }
    if (fake.forceStatus) {
      const s = fake.forceStatus;
      if (s === 401) fault(res, 401, 'AUTHENTICATION', 'message=AuthenticationFailed; errorCode=003200; statusCode=401', '3200', 'Token expired');
      else if (s === 429) fault(res, 429, 'ThrottlingFault', 'message=ThrottleExceeded; errorCode=003001; statusCode=429', '3001');
      else fault(res, s, 'SystemFault', 'An application error has occurred while processing your request', '10000');
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !fake.accessTokens.has(bearer)) {
      fault(res, 401, 'AUTHENTICATION', 'message=AuthenticationFailed; errorCode=003200; statusCode=401', '3200', 'Token revoked or expired');
      return;
    }
    if (m[1] !== fake.realmId) {
      fault(res, 403, 'AuthorizationFault', 'message=ApplicationAuthorizationFailed; errorCode=003100; statusCode=403', '3100');
      return;
    }
    if (m[2] === 'cdc') {
      cdc(url, res);
      return;
    }
    if (m[2] !== 'query') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ CompanyInfo: { Id: '1', CompanyName: 'Fake Company', Country: 'US' }, time: new Date().toISOString() }));
      return;
    }
    const statement = (url.searchParams.get('query') ?? '').trim();
    const sm = statement.match(STATEMENT_RE);
    if (!sm) {
      fault(res, 400, 'ValidationFault', `QueryParserError: Encountered an unparseable statement: ${statement}`, '4000');
      return;
    }
    const entity = sm[1] as QboEntity;
    const orderBy = sm[3] ? sm[3].split(',').map((x) => x.trim()) : [];
    const unknownOrder = orderBy.find((o) => !ORDER_KEYS[o.toLowerCase()]);
    if (unknownOrder) {
      fault(res, 400, 'ValidationFault', `QueryValidationError: property ${unknownOrder} is not sortable`, '4001');
      return;
    }
    const startPosition = Number(sm[4] ?? 1);
    const maxResults = Math.min(Number(sm[5] ?? 100), 1000);
    let since: string | null = null;
    let until: string | null = null;
    const predicates: ((r: QboRecord) => boolean)[] = [];
    for (const part of sm[2] ? sm[2].split(/\s+AND\s+/i) : []) {
      const idc = part.trim().match(ID_CONDITION_RE);
      if (idc) {
        const [, op, value] = idc;
        const v = Number(value);
        predicates.push((r) => {
          const id = Number(r.Id);
          return op === '>=' ? id >= v : op === '>' ? id > v : op === '<=' ? id <= v : op === '=' ? id === v : id < v;
        });
        continue;
      }
      const c = part.trim().match(CONDITION_RE);
      if (!c) {
        fault(res, 400, 'ValidationFault', `QueryValidationError: unsupported condition ${part}`, '4001');
        return;
      }
      const [, op, value] = c;
      const t = Date.parse(value!);
      if (op === '>=' || op === '>') since = value!;
      else if (op !== '=') until = value!;
      predicates.push((r) => {
        const u = Date.parse(r.MetaData.LastUpdatedTime);
        return op === '>=' ? u >= t : op === '>' ? u > t : op === '<=' ? u <= t : op === '=' ? u === t : u < t;
      });
    }
    const request: QueryRequest = { entity, statement, orderBy, startPosition, maxResults, since, until, authorization: req.headers.authorization, minorversion: url.searchParams.get('minorversion') };
    fake.queries.push(request);
    if (!(entity in fake.records)) {
      fault(res, 400, 'ValidationFault', `QueryValidationError: Property ${entity} not found`, '4001');
      return;
    }
    const block = blocks.find((b) => b.entity === entity && !b.released && b.match(request));
    if (block) {
      block.arrived();
      await new Promise<void>((r) => block.waiters.push(r));
      if (res.destroyed || req.socket.destroyed) return;
    }
    // Without an ORDERBY, QuickBooks answers in its own (Id) order.
    const keys = (orderBy.length ? orderBy : ['Id']).map((o) => ORDER_KEYS[o.toLowerCase()]!);
    const matching = fake.records[entity]
      .filter((r) => predicates.every((p) => p(r)))
      .sort((a, b) => {
        for (const k of keys) {
          const d = k(a) - k(b);
          if (d !== 0) return d;
        }
        return 0;
      });
    const page = matching.slice(startPosition - 1, startPosition - 1 + maxResults);
    const queryResponse: Record<string, unknown> = page.length ? { [entity]: page, startPosition, maxResults: page.length } : {};
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ QueryResponse: queryResponse, time: new Date().toISOString() }));
  }

  function cdc(url: URL, res: http.ServerResponse) {
    const entities = (url.searchParams.get('entities') ?? '').split(',').map((e) => e.trim()).filter(Boolean);
    const changedSince = url.searchParams.get('changedSince') ?? '';
    fake.cdcRequests.push({ entities, changedSince, minorversion: url.searchParams.get('minorversion') });
    const since = Date.parse(changedSince);
    if (!entities.length || Number.isNaN(since)) {
      fault(res, 400, 'ValidationFault', 'Invalid CDC request: entities and changedSince are required', '2010');
      return;
    }
    if (Date.now() - since > CDC_LOOKBACK_MS) {
      fault(res, 400, 'ValidationFault', 'changedSince must be within the last 30 days', '2010');
      return;
    }
    const unknown = entities.find((e) => !(e in fake.records));
    if (unknown) {
      fault(res, 400, 'ValidationFault', `Invalid entity ${unknown}`, '2010');
      return;
    }
    // Every change of the requested entities, oldest first, capped at 1,000 objects per response.
    const changes: { entity: string; at: number; object: Record<string, unknown> }[] = [];
    for (const e of entities as QboEntity[]) {
      for (const r of fake.records[e]) {
        const at = Date.parse(r.MetaData.LastUpdatedTime);
        if (at >= since) changes.push({ entity: e, at, object: r });
      }
      for (const [id, when] of fake.deleted[e]) {
        const at = Date.parse(when);
        if (at >= since) changes.push({ entity: e, at, object: { domain: 'QBO', status: 'Deleted', Id: id, MetaData: { LastUpdatedTime: when } } });
      }
    }
    changes.sort((a, b) => a.at - b.at);
    const kept = changes.slice(0, CDC_MAX_OBJECTS);
    const queryResponse = entities
      .map((e) => {
        const objects = kept.filter((c) => c.entity === e).map((c) => c.object);
        return objects.length ? { [e]: objects, startPosition: 1, maxResults: objects.length } : null;
      })
      .filter(Boolean);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ CDCResponse: [{ QueryResponse: queryResponse }], time: new Date().toISOString() }));
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.block = (entity, at) => {
    let arrived!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const match = typeof at === 'number' ? (q: QueryRequest) => q.startPosition === at : at;
    const b = { entity, match, arrived, released: false, waiters: [] as (() => void)[] };
    blocks.push(b);
    return {
      reached,
      release() {
        b.released = true;
        for (const w of b.waiters.splice(0)) w();
      },
    };
  };
  fake.queriesFor = (entity) => fake.queries.filter((q) => q.entity === entity);
  fake.remove = (entity, id, at = new Date().toISOString()) => {
    const i = fake.records[entity].findIndex((r) => r.Id === id);
    if (i < 0) throw new Error(`no ${entity} ${id} to delete`);
    fake.records[entity].splice(i, 1);
    fake.deleted[entity].set(id, at);
  };
  fake.close = async () => {
    for (const b of blocks) {
      b.released = true;
      for (const w of b.waiters.splice(0)) w();
    }
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return fake;
}

/** Documented-shape records for tests. Amounts are JSON numbers, as QBO sends them. */
export function qboCustomer(id: number, lastUpdated: string, over: Record<string, unknown> = {}): QboRecord {
  return {
    Id: String(id),
    SyncToken: '0',
    DisplayName: `Customer ${id}`,
    CompanyName: `Customer ${id} LLC`,
    GivenName: 'Pat',
    FamilyName: `Payer${id}`,
    Active: true,
    Balance: 0,
    PrimaryEmailAddr: { Address: `billing${id}@customer.example` },
    PrimaryPhone: { FreeFormNumber: `(555) 010-${String(id).padStart(4, '0')}` },
    BillAddr: { Id: String(1000 + id), Line1: `${id} Main Street`, City: 'Mountain View', CountrySubDivisionCode: 'CA', PostalCode: '94043', Country: 'USA' },
    CurrencyRef: { value: 'USD', name: 'United States Dollar' },
    MetaData: { CreateTime: lastUpdated, LastUpdatedTime: lastUpdated },
    ...over,
  };
}

export function qboInvoice(
  id: number,
  customerId: number,
  lastUpdated: string,
  lines: { qty: number; unitPrice: number; amount: number; description?: string }[],
  over: Record<string, unknown> = {},
): QboRecord {
  return {
    Id: String(id),
    SyncToken: '0',
    DocNumber: `INV-${id}`,
    TxnDate: '2026-03-15',
    DueDate: '2026-04-14',
    CustomerRef: { value: String(customerId), name: `Customer ${customerId}` },
    CurrencyRef: { value: 'USD', name: 'United States Dollar' },
    PrivateNote: `Invoice ${id}`,
    Line: [
      ...lines.map((l, i) => ({
        Id: String(i + 1),
        LineNum: i + 1,
        Description: l.description ?? `Item ${i + 1}`,
        Amount: l.amount,
        DetailType: 'SalesItemLineDetail',
        SalesItemLineDetail: { ItemRef: { value: '1', name: 'Services' }, UnitPrice: l.unitPrice, Qty: l.qty },
      })),
      { Amount: 0, DetailType: 'SubTotalLineDetail', SubTotalLineDetail: {} },
    ],
    MetaData: { CreateTime: lastUpdated, LastUpdatedTime: lastUpdated },
    ...over,
  };
}
