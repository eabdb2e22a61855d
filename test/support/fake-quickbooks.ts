/**
 * A local QuickBooks Online on loopback, following Intuit's documented shapes:
 * - Accounting API query: `GET /v3/company/{realmId}/query?query=<statement>&minorversion=N`,
 *   `Authorization: Bearer`, `{QueryResponse: {<Entity>: [...], startPosition, maxResults}, time}`,
 *   an empty result `{QueryResponse: {}, time}`; faults `{Fault: {Error: [{Message, Detail, code}], type}, time}`.
 *   The statement supports what the adapter sends: `SELECT * FROM <Entity> [WHERE <cond> [AND <cond>]]
 *   [ORDERBY Id] [STARTPOSITION n] [MAXRESULTS m]` with conditions on `Metadata.LastUpdatedTime`.
 * - `GET /v3/company/{realmId}/companyinfo/{realmId}` (health checks).
 * - OAuth 2.0 token endpoint `POST /oauth2/v1/tokens/bearer` (authorization_code and refresh_token grants).
 *
 * Test controls: the records, the valid access token, request log, forced statuses, and
 * `block(entity, startPosition)` to hold one page's response until released.
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
  startPosition: number;
  maxResults: number;
  since: string | null;
  until: string | null;
  authorization: string | undefined;
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
  tokenRequests: URLSearchParams[];
  /** answer every API call with this status and a Fault body (null: normal) */
  forceStatus: number | null;
  /** the code the token endpoint accepts */
  authorizationCode: string;
  block(entity: QboEntity, startPosition: number): PageBlock;
  queriesFor(entity: QboEntity): QueryRequest[];
  close(): Promise<void>;
}

function fault(res: http.ServerResponse, status: number, type: string, message: string, code: string, detail = message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ Fault: { Error: [{ Message: message, Detail: detail, code }], type }, time: new Date().toISOString() }));
}

const STATEMENT_RE = /^SELECT \* FROM (\w+)(?: WHERE (.+?))?(?: ORDERBY (\w+))?(?: STARTPOSITION (\d+))?(?: MAXRESULTS (\d+))?$/i;
const CONDITION_RE = /^Metadata\.LastUpdatedTime\s*(>=|>|<=|<)\s*'([^']+)'$/i;

export async function startFakeQuickbooks(opts: { realmId?: string } = {}): Promise<FakeQuickbooks> {
  const blocks: { entity: string; startPosition: number; arrived: () => void; released: boolean; waiters: (() => void)[] }[] = [];
  const fake = {
    url: '',
    realmId: opts.realmId ?? '9130357766123456',
    accessTokens: new Set<string>(),
    authorizationCode: 'qbo-auth-code',
    records: { Customer: [], Invoice: [], CreditMemo: [] } as Record<QboEntity, QboRecord[]>,
    queries: [] as QueryRequest[],
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
    const m = url.pathname.match(/^\/v3\/company\/([^/]+)\/(query|companyinfo\/[^/]+)$/);
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
    const startPosition = Number(sm[4] ?? 1);
    const maxResults = Math.min(Number(sm[5] ?? 100), 1000);
    let since: string | null = null;
    let until: string | null = null;
    const predicates: ((r: QboRecord) => boolean)[] = [];
    for (const part of sm[2] ? sm[2].split(/\s+AND\s+/i) : []) {
      const c = part.trim().match(CONDITION_RE);
      if (!c) {
        fault(res, 400, 'ValidationFault', `QueryValidationError: unsupported condition ${part}`, '4001');
        return;
      }
      const [, op, value] = c;
      const t = Date.parse(value!);
      if (op === '>=' || op === '>') since = value!;
      else until = value!;
      predicates.push((r) => {
        const u = Date.parse(r.MetaData.LastUpdatedTime);
        return op === '>=' ? u >= t : op === '>' ? u > t : op === '<=' ? u <= t : u < t;
      });
    }
    fake.queries.push({ entity, statement, startPosition, maxResults, since, until, authorization: req.headers.authorization, minorversion: url.searchParams.get('minorversion') });
    if (!(entity in fake.records)) {
      fault(res, 400, 'ValidationFault', `QueryValidationError: Property ${entity} not found`, '4001');
      return;
    }
    const block = blocks.find((b) => b.entity === entity && b.startPosition === startPosition && !b.released);
    if (block) {
      block.arrived();
      await new Promise<void>((r) => block.waiters.push(r));
      if (res.destroyed || req.socket.destroyed) return;
    }
    const matching = fake.records[entity].filter((r) => predicates.every((p) => p(r))).sort((a, b) => Number(a.Id) - Number(b.Id));
    const page = matching.slice(startPosition - 1, startPosition - 1 + maxResults);
    const queryResponse: Record<string, unknown> = page.length ? { [entity]: page, startPosition, maxResults: page.length } : {};
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ QueryResponse: queryResponse, time: new Date().toISOString() }));
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.block = (entity, startPosition) => {
    let arrived!: () => void;
    const reached = new Promise<void>((r) => (arrived = r));
    const b = { entity, startPosition, arrived, released: false, waiters: [] as (() => void)[] };
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
