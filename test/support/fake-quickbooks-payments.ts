/**
 * QuickBooks Online Payment endpoints on loopback, in front of the fake of fake-quickbooks.ts
 * (every other request — OAuth, query, companyinfo — is forwarded to it unchanged, so this file
 * needs no change in the shared fake). Intuit's documented shapes:
 *
 * - create `POST /v3/company/{realmId}/payment?requestid=<id>&minorversion=N` with
 *   `{CustomerRef: {value}, TotalAmt, TxnDate?, CurrencyRef?, PaymentRefNum?, PrivateNote?,
 *   Line: [{Amount, LinkedTxn: [{TxnId, TxnType: "Invoice" | "CreditMemo"}]}]}` → `{Payment: {Id, SyncToken: "0",
 *   TotalAmt, UnappliedAmt, Line, MetaData, …}, time}`. The linked invoices' and credit memos' `Balance`
 *   drops by the line amounts (and their LastUpdatedTime moves); a credit memo's line is credit applied,
 *   so the cash is Σ invoice lines − Σ credit memo lines, and TotalAmt above it is `UnappliedAmt`.
 *   `requestid`: a request id seen before gets the first response again and changes nothing.
 * - read `GET /v3/company/{realmId}/payment/{Id}` → `{Payment, time}`.
 * - delete `POST /v3/company/{realmId}/payment?operation=delete` `{Id, SyncToken}` →
 *   `{Payment: {Id, status: "Deleted", domain: "QBO"}, time}`; the invoices get their balance back.
 * - query `GET /v3/company/{realmId}/query?query=select * from Payment where PaymentRefNum = '<ref>'`
 *   → `{QueryResponse: {Payment: [...], startPosition, maxResults}, time}` (`{QueryResponse: {}}` when
 *   none); deleted Payments are not returned. Other Payment queries are refused as QuickBooks refuses
 *   a filter it does not support (QueryValidationError 4001); queries of other entities are forwarded.
 * - faults `{Fault: {Error: [{Message, Detail, code}], type}, time}`: ValidationFault 400 for a
 *   missing CustomerRef (2020), an unknown invoice or more than its balance (6000 "Business
 *   Validation Error"), an unknown or deleted Payment (610 "Object Not Found"), a stale SyncToken (5010).
 *
 * Test controls: `refuseCreates` (answer creates with a given ValidationFault), `failNext` (answer the
 * next Payment requests — create, read, query — with a 503 or 401, optionally after the create was
 * saved: the answer QuickBooks lost), the request log.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeQuickbooks, QboRecord } from './fake-quickbooks.js';

export interface QboPaymentRecord {
  Id: string;
  SyncToken: string;
  CustomerRef: { value: string };
  TotalAmt: number;
  UnappliedAmt: number;
  TxnDate?: string;
  PaymentRefNum?: string;
  PrivateNote?: string;
  CurrencyRef?: { value: string };
  Line: { Amount: number; LinkedTxn: { TxnId: string; TxnType: string }[] }[];
  MetaData: { CreateTime: string; LastUpdatedTime: string };
}

export interface PaymentRequest {
  method: string;
  operation: 'create' | 'read' | 'delete' | 'query';
  requestId: string | null;
  body: any;
  /** the raw JSON text as sent (to check amounts are written exactly) */
  raw: string;
}

export interface FakeQboPayments {
  /** use as the QuickBooks api_base_url and token_url base */
  url: string;
  base: FakeQuickbooks;
  payments: QboPaymentRecord[];
  deleted: QboPaymentRecord[];
  requests: PaymentRequest[];
  /** answer every create with this ValidationFault (null: normal) */
  refuseCreates: { message: string; detail: string; code: string } | null;
  /** the next Payment requests (one entry each) get this status; `saved`: the next create is carried out first */
  failNext: { status: 503 | 401; saved?: boolean }[];
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function fault(status: number, type: string, message: string, code: string, detail = message) {
  return { status, body: { Fault: { Error: [{ Message: message, Detail: detail, code }], type }, time: new Date().toISOString() } };
}

const cents = (n: number) => Math.round(n * 100);

export async function startFakeQboPayments(base: FakeQuickbooks): Promise<FakeQboPayments> {
  const fake: FakeQboPayments = {
    url: '',
    base,
    payments: [],
    deleted: [],
    requests: [],
    refuseCreates: null,
    failNext: [],
    close: async () => {},
  };
  const byRequestId = new Map<string, { status: number; body: unknown }>();
  let nextId = 9001;

  function invoice(id: string, type = 'Invoice'): QboRecord | undefined {
    return (type === 'CreditMemo' ? base.records.CreditMemo : base.records.Invoice).find((r) => r.Id === id);
  }

  function touch(inv: QboRecord, balanceCents: number) {
    inv.Balance = balanceCents / 100;
    const now = new Date().toISOString();
    inv.MetaData = { ...inv.MetaData, LastUpdatedTime: now };
    inv.SyncToken = String(Number(inv.SyncToken ?? '0') + 1);
  }

  function create(body: any): { status: number; body: unknown } {
    if (fake.refuseCreates) return fault(400, 'ValidationFault', fake.refuseCreates.message, fake.refuseCreates.code, fake.refuseCreates.detail);
    if (!body?.CustomerRef?.value) return fault(400, 'ValidationFault', 'Required param missing, need to supply the required value for the API', '2020', 'Required parameter CustomerRef is missing in the request');
    if (typeof body.TotalAmt !== 'number' || body.TotalAmt < 0) return fault(400, 'ValidationFault', 'Required param missing, need to supply the required value for the API', '2020', 'Required parameter TotalAmt is missing in the request');
    const lines = (body.Line ?? []) as QboPaymentRecord['Line'];
    let applied = 0;
    for (const line of lines) {
      const link = line.LinkedTxn?.[0];
      const inv = link?.TxnType === 'Invoice' || link?.TxnType === 'CreditMemo' ? invoice(link.TxnId, link.TxnType) : undefined;
      if (!inv) return fault(400, 'ValidationFault', 'Business Validation Error: Invoice not found', '6000', `Linked invoice ${link?.TxnId} does not exist.`);
      if ((inv.CustomerRef as { value: string }).value !== body.CustomerRef.value) {
        return fault(400, 'ValidationFault', 'Business Validation Error: the invoice belongs to another customer', '6000', `Invoice ${inv.Id} is not an invoice of customer ${body.CustomerRef.value}.`);
      }
      if (cents(line.Amount) > cents(Number(inv.Balance))) {
        return fault(400, 'ValidationFault', 'Business Validation Error: the payment is more than the open balance', '6000', `Invoice ${inv.Id} has a balance of ${String(inv.Balance)}.`);
      }
      applied += link!.TxnType === 'CreditMemo' ? -cents(line.Amount) : cents(line.Amount);
    }
    if (applied < 0) return fault(400, 'ValidationFault', 'Business Validation Error: the credits exceed the invoices', '6000', 'The credit memos applied exceed the invoices paid.');
    if (applied > cents(body.TotalAmt)) return fault(400, 'ValidationFault', 'Business Validation Error: the lines exceed the total', '6000', 'The applied amount exceeds TotalAmt.');
    for (const line of lines) {
      const inv = invoice(line.LinkedTxn[0]!.TxnId, line.LinkedTxn[0]!.TxnType)!;
      touch(inv, cents(Number(inv.Balance)) - cents(line.Amount));
    }
    const now = new Date().toISOString();
    const payment: QboPaymentRecord = {
      Id: String(nextId++),
      SyncToken: '0',
      CustomerRef: { value: body.CustomerRef.value },
      TotalAmt: body.TotalAmt,
      UnappliedAmt: (cents(body.TotalAmt) - applied) / 100,
      ...(body.TxnDate ? { TxnDate: body.TxnDate } : {}),
      ...(body.PaymentRefNum ? { PaymentRefNum: body.PaymentRefNum } : {}),
      ...(body.PrivateNote ? { PrivateNote: body.PrivateNote } : {}),
      ...(body.CurrencyRef ? { CurrencyRef: body.CurrencyRef } : {}),
      Line: lines,
      MetaData: { CreateTime: now, LastUpdatedTime: now },
    };
    fake.payments.push(payment);
    return { status: 200, body: { Payment: { ...payment, domain: 'QBO', sparse: false }, time: now } };
  }

  function remove(body: any): { status: number; body: unknown } {
    const i = fake.payments.findIndex((p) => p.Id === String(body?.Id));
    if (i < 0) return fault(400, 'ValidationFault', 'Object Not Found', '610', `Object Not Found : Something you're trying to use has been made inactive. Check the fields with accounts, customers, items, vendors or employees.`);
    const payment = fake.payments[i]!;
    if (String(body.SyncToken) !== payment.SyncToken) return fault(400, 'ValidationFault', 'Stale Object Error', '5010', `Stale Object Error : You and ${'another user'} were working on the same thing.`);
    for (const line of payment.Line) {
      const inv = invoice(line.LinkedTxn[0]!.TxnId, line.LinkedTxn[0]!.TxnType);
      if (inv) touch(inv, cents(Number(inv.Balance)) + cents(line.Amount));
    }
    fake.payments.splice(i, 1);
    fake.deleted.push(payment);
    return { status: 200, body: { Payment: { Id: payment.Id, status: 'Deleted', domain: 'QBO' }, time: new Date().toISOString() } };
  }

  async function forward(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer) {
    const headers: Record<string, string> = {};
    for (const h of ['authorization', 'content-type', 'accept']) if (req.headers[h]) headers[h] = String(req.headers[h]);
    const r = await fetch(base.url + (req.url ?? '/'), { method: req.method, headers, body: req.method === 'GET' || req.method === 'HEAD' ? undefined : raw });
    res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await r.arrayBuffer()));
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      void handle(req, res, raw).catch((err: Error) => {
        if (!res.headersSent) send(res, 500, fault(500, 'SystemFault', err.message, '10000').body);
      });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const q = url.pathname.match(/^\/v3\/company\/([^/]+)\/query$/);
    const statement = (url.searchParams.get('query') ?? '').trim();
    const isPaymentQuery = q !== null && /^select\s.+\sfrom\s+payment\b/i.test(statement);
    const m = isPaymentQuery ? [q[0], q[1], undefined] : url.pathname.match(/^\/v3\/company\/([^/]+)\/payment(?:\/([^/]+))?$/);
    if (!m) return forward(req, res, raw);
    const text = raw.toString('utf8');
    const operation = isPaymentQuery ? 'query' : req.method === 'GET' ? 'read' : url.searchParams.get('operation') === 'delete' ? 'delete' : 'create';
    let body: any = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    const requestId = url.searchParams.get('requestid');
    fake.requests.push({ method: req.method ?? 'GET', operation, requestId, body, raw: text });
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !base.accessTokens.has(bearer)) {
      const f = fault(401, 'AUTHENTICATION', 'message=AuthenticationFailed; errorCode=003200; statusCode=401', '3200', 'Token revoked or expired');
      return send(res, f.status, f.body);
    }
    if (m[1] !== base.realmId) {
      const f = fault(403, 'AuthorizationFault', 'message=ApplicationAuthorizationFailed; errorCode=003100; statusCode=403', '3100');
      return send(res, f.status, f.body);
    }
    // an injected answer for a saved create waits for the next create; the others take the next request
    const injected = fake.failNext[0] && (!fake.failNext[0].saved || operation === 'create') ? fake.failNext.shift() : undefined;
    if (injected) {
      if (injected.saved && operation === 'create' && body !== null) {
        const key = requestId ? `create:${requestId}` : null;
        const result = create(body);
        if (key) byRequestId.set(key, result);
      }
      const f = injected.status === 401
        ? fault(401, 'AUTHENTICATION', 'message=AuthenticationFailed; errorCode=003200; statusCode=401', '3200', 'Token revoked or expired')
        : fault(503, 'SystemFault', 'Service Unavailable', '10000');
      return send(res, f.status, f.body);
    }
    if (operation === 'query') {
      // the documented filter on a Payment's reference number: PaymentRefNum = '<text>' (\' escapes a quote)
      const w = statement.match(/^select\s+\*\s+from\s+payment\s+where\s+PaymentRefNum\s*=\s*'((?:[^'\\]|\\.)*)'\s*$/i);
      if (!w) {
        const f = fault(400, 'ValidationFault', `QueryValidationError: unsupported query ${statement}`, '4001');
        return send(res, f.status, f.body);
      }
      const ref = w[1]!.replace(/\\(.)/g, '$1');
      const found = fake.payments.filter((p) => p.PaymentRefNum === ref).map((p) => ({ ...p, domain: 'QBO', sparse: false }));
      return send(res, 200, { QueryResponse: found.length ? { Payment: found, startPosition: 1, maxResults: found.length } : {}, time: new Date().toISOString() });
    }
    if (operation === 'read') {
      const p = fake.payments.find((x) => x.Id === m[2]);
      const r = p ? { status: 200, body: { Payment: { ...p, domain: 'QBO' }, time: new Date().toISOString() } } : fault(400, 'ValidationFault', 'Object Not Found', '610', `Payment ${m[2]} does not exist.`);
      return send(res, r.status, r.body);
    }
    if (req.method !== 'POST' || m[2]) {
      const f = fault(405, 'ValidationFault', 'Unsupported operation', '500');
      return send(res, f.status, f.body);
    }
    if (body === null) {
      const f = fault(400, 'ValidationFault', 'Request has invalid or unsupported property', '2010');
      return send(res, f.status, f.body);
    }
    // requestid: the same id gets the first answer again and changes nothing
    const key = requestId ? `${operation}:${requestId}` : null;
    const earlier = key ? byRequestId.get(key) : undefined;
    const result = earlier ?? (operation === 'delete' ? remove(body) : create(body));
    if (key && !earlier) byRequestId.set(key, result);
    send(res, result.status, result.body);
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return fake;
}
