import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundPolicy } from '@rp/platform';
import { mapCustomer, mapTransaction, parseQboJson, qboIncrementalSince, qboQuery, qboStartState, quickbooksOnlineAdapter } from '../src/adapters/quickbooks-online.js';
import { ProviderApiError } from '../src/adapters/adapter.js';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks } from '../../../test/support/fake-quickbooks.js';

/** The fakes run on loopback: the guarded client may reach it in these tests. */
const LOOPBACK = OutboundPolicy.parse('127.0.0.0/8,::1');

describe('QuickBooks Online adapter (pure parts)', () => {
  it('reads amounts as the exact decimal text the server sent', () => {
    const parsed = parseQboJson(
      '{"QueryResponse":{"Invoice":[{"Id":"1","TotalAmt":0.3,"Balance": 12345678901234567.89,"Line":[{"Amount":1e-7,"SalesItemLineDetail":{"Qty":3,"UnitPrice":19.990}}],"PrivateNote":"\\"TotalAmt\\": 5"}]}}',
    ) as any;
    const inv = parsed.QueryResponse.Invoice[0];
    expect(inv.TotalAmt).toBe('0.3');
    expect(inv.Balance).toBe('12345678901234567.89');
    expect(inv.Line[0].Amount).toBe('0.0000001');
    expect(inv.Line[0].SalesItemLineDetail).toEqual({ Qty: '3', UnitPrice: '19.99' });
    expect(inv.PrivateNote).toBe('"TotalAmt": 5');
  });

  it('builds the documented query: keyset from a LastUpdatedTime in a stable order, incremental start with 5 minutes of overlap', () => {
    expect(qboIncrementalSince({ start: '2026-01-02T03:04:05.678Z', end: '2026-01-03T00:00:00.000Z' })).toBe('2026-01-02T02:59:05+00:00');
    expect(qboQuery('Invoice', '2026-01-02T02:59:05+00:00', 100)).toBe(
      "SELECT * FROM Invoice WHERE MetaData.LastUpdatedTime >= '2026-01-02T02:59:05+00:00' ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS 100",
    );
    expect(qboQuery('Customer', null, 100)).toBe('SELECT * FROM Customer ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS 100');
    // Initial syncs and windows beyond CDC's 30-day look-back read everything; recent windows of documents start with CDC.
    const now = Date.parse('2026-03-01T00:00:00Z');
    expect(qboStartState('Invoice', { start: null, end: '2026-03-01T00:00:00Z' }, 100, now)).toMatchObject({ mode: 'full', phase: 'query', since: null });
    expect(qboStartState('Invoice', { start: '2026-01-15T00:00:00Z', end: '2026-03-01T00:00:00Z' }, 100, now)).toMatchObject({ mode: 'full', since: null });
    expect(qboStartState('Invoice', { start: '2026-02-25T00:00:00Z', end: '2026-03-01T00:00:00Z' }, 100, now)).toMatchObject({ mode: 'incremental', phase: 'changes', since: '2026-02-24T23:55:00+00:00' });
    expect(qboStartState('Customer', { start: '2026-02-25T00:00:00Z', end: '2026-03-01T00:00:00Z' }, 100, now)).toMatchObject({ mode: 'incremental', phase: 'query' });
  });

  it('closes a voided invoice even when QuickBooks left a balance', () => {
    const voided = mapTransaction({ Id: '12', TxnDate: '2026-02-01', TotalAmt: '0', Balance: '0', PrivateNote: 'Voided', CurrencyRef: { value: 'USD' } }, 'invoice', 'r', null);
    expect(voided).toMatchObject({ amount_open: '0', status_open: false });
    const odd = mapTransaction({ Id: '13', TxnDate: '2026-02-01', TotalAmt: '10', Balance: '10', PrivateNote: 'Voided - duplicate', CurrencyRef: { value: 'USD' } }, 'invoice', 'r', null);
    expect(odd).toMatchObject({ amount_open: '0', status_open: false });
  });

  it('maps customers, invoices and credit memos', () => {
    expect(mapCustomer({ Id: '42', DisplayName: ' Acme ', CompanyName: 'Acme Inc.', CurrencyRef: { value: 'usd' }, BillAddr: { Line1: '1 Road', City: 'Town' } })).toMatchObject({
      remote_id: '42',
      name: 'Acme',
      legal_name: 'Acme Inc.',
      email: null,
      currency: 'USD',
      address: { line1: '1 Road', city: 'Town' },
    });
    expect(mapCustomer({ Id: '43' }).name).toBe('Customer 43');
    expect(mapCustomer({ Id: '44', GivenName: 'Ann', FamilyName: 'Lee' }).name).toBe('Ann Lee');
    const invoice = mapTransaction(
      {
        Id: '7',
        TxnDate: '2025-12-31',
        DueDate: '2026-01-30',
        TotalAmt: '100.10',
        Balance: '0',
        CurrencyRef: { value: 'EUR' },
        CustomerRef: { value: '42' },
        Line: [
          { LineNum: 1, Amount: '100.10', DetailType: 'SalesItemLineDetail', SalesItemLineDetail: { Qty: '1', UnitPrice: '100.1', ItemRef: { name: 'Hours' } } },
          { Amount: '100.10', DetailType: 'SubTotalLineDetail' },
        ],
      },
      'invoice',
      'realm-1',
      null,
    );
    expect(invoice).toMatchObject({
      kind: 'invoice',
      company_code: 'realm-1',
      fiscal_year: '2025',
      document_number: '7',
      customer_code: '42',
      amount_in_document_currency: '100.1',
      amount_open: '0',
      status_open: false,
      net_due_date: '2026-01-30',
      line_items: [{ line_number: 1, description: 'Hours', quantity: '1', unit_amount: '100.1', total_amount: '100.10' }],
    });
    const memo = mapTransaction({ Id: '8', DocNumber: 'CM-8', TxnDate: '2026-02-01', TotalAmt: '5', Balance: '5', CurrencyRef: { value: 'EUR' } }, 'credit_memo', 'realm-1', null);
    expect(memo).toMatchObject({ kind: 'credit_memo', document_number: 'CM-8', status_open: true, net_due_date: '2026-02-01', customer_code: null });
    // QuickBooks numbers invoices and credit memos apart: the same DocNumber on both must give two ledger keys.
    const sameNumber = { Id: '10', DocNumber: '1001', TxnDate: '2026-02-01', TotalAmt: '5', Balance: '5', CurrencyRef: { value: 'EUR' } };
    const invoiceKey = mapTransaction(sameNumber, 'invoice', 'realm-1', null);
    const memoKey = mapTransaction({ ...sameNumber, Id: '11' }, 'credit_memo', 'realm-1', null);
    expect([invoiceKey.company_code, invoiceKey.fiscal_year, invoiceKey.document_number]).toEqual(['realm-1', '2026', '1001']);
    expect([memoKey.company_code, memoKey.fiscal_year, memoKey.document_number]).toEqual(['realm-1:credit_memo', '2026', '1001']);
    expect(() => mapTransaction({ Id: '9', TotalAmt: '1' }, 'invoice', 'r', 'USD')).toThrow(/TxnDate/);
  });
});

describe('QuickBooks Online adapter errors', () => {
  let server: http.Server;
  let url: string;
  let status = 200;
  let body = '{}';
  const headers: Record<string, string> = {};

  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const fetchPage = () =>
    quickbooksOnlineAdapter.fetchPage({ accessToken: 't', realmId: '1', apiBaseUrl: url, outbound: LOOPBACK }, 'customers', { start: null, end: new Date().toISOString() }, quickbooksOnlineAdapter.initialState(), {});

  it.each([
    [401, 'authentication_required', false],
    [429, 'rate_limited', true],
    [503, 'server_error', true],
    [400, 'rejected', false],
  ] as const)('HTTP %i → %s (retryable: %s)', async (s, kind, retryable) => {
    status = s;
    body = JSON.stringify({ Fault: { Error: [{ Message: 'nope', Detail: 'because', code: '1' }], type: 'ValidationFault' } });
    headers['retry-after'] = '7';
    const err = (await fetchPage().catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.kind).toBe(kind);
    expect(err.retryable).toBe(retryable);
    expect(err.message).toContain('nope');
    if (s === 429) expect(err.retryAfterSeconds).toBe(7);
  });

  it('treats an empty QueryResponse as the last page, and a full page as one with a next page from its last LastUpdatedTime', async () => {
    status = 200;
    body = JSON.stringify({ QueryResponse: {}, time: '2026-01-01T00:00:00Z' });
    expect(await fetchPage()).toEqual({ records: { type: 'partners', rows: [] }, next: null });
    const at = (i: number) => (i < 60 ? '2026-01-01T00:00:00-08:00' : '2026-01-01T00:00:01-08:00');
    body = JSON.stringify({
      QueryResponse: { Customer: Array.from({ length: 100 }, (_, i) => ({ Id: String(i + 1), DisplayName: `C${i}`, MetaData: { LastUpdatedTime: at(i) } })), startPosition: 1, maxResults: 100 },
    });
    const page = await fetchPage();
    expect(page.records.rows).toHaveLength(100);
    const seen = Array.from({ length: 40 }, (_, i) => String(i + 61));
    expect(page.next).toEqual({ mode: 'full', phase: 'query', since: '2026-01-01T00:00:01-08:00', seen, max_results: 100 });
    // The next page asks for 100 + the 40 already read at that second, and drops those 40.
    const again = Array.from({ length: 140 }, (_, i) => ({ Id: String(i + 61), DisplayName: `C${i}`, MetaData: { LastUpdatedTime: '2026-01-01T00:00:01-08:00' } }));
    body = JSON.stringify({ QueryResponse: { Customer: again, startPosition: 1, maxResults: 140 } });
    const second = await quickbooksOnlineAdapter.fetchPage({ accessToken: 't', realmId: '1', apiBaseUrl: url, outbound: LOOPBACK }, 'customers', { start: null, end: new Date().toISOString() }, page.next!, {});
    expect(second.records.rows.map((r) => (r as { remote_id: string }).remote_id)).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 101)));
    expect((second.next as { seen: string[] }).seen).toHaveLength(140);
  });

  it('reads deletions from CDC, and falls back to a full read when CDC answers its maximum', async () => {
    status = 200;
    const state = { mode: 'incremental', phase: 'changes', since: new Date().toISOString(), seen: [], max_results: 100 };
    const window = { start: new Date().toISOString(), end: new Date().toISOString() };
    const access = { accessToken: 't', realmId: '1', apiBaseUrl: url, outbound: LOOPBACK };
    body = JSON.stringify({
      CDCResponse: [{ QueryResponse: [{ Invoice: [{ Id: '5', TotalAmt: 1 }, { domain: 'QBO', status: 'Deleted', Id: '6', MetaData: { LastUpdatedTime: '2026-01-01T00:00:00Z' } }], startPosition: 1, maxResults: 2 }] }],
      time: '2026-01-01T00:00:00Z',
    });
    const page = await quickbooksOnlineAdapter.fetchPage(access, 'invoices', window, state, {});
    expect(page).toEqual({ records: { type: 'documents', rows: [] }, deletions: { kind: 'invoice', remoteIds: ['6'] }, next: { ...state, phase: 'query' } });
    body = JSON.stringify({ CDCResponse: [{ QueryResponse: [{ Invoice: Array.from({ length: 1000 }, (_, i) => ({ Id: String(i) })) }] }] });
    const capped = await quickbooksOnlineAdapter.fetchPage(access, 'invoices', window, state, {});
    expect(capped.deletions).toBeUndefined();
    expect(capped.next).toEqual({ mode: 'full', phase: 'query', since: null, seen: [], max_results: 100 });
  });

  it('reports an unreachable server as retryable', async () => {
    const err = (await quickbooksOnlineAdapter
      .fetchPage({ accessToken: 't', realmId: '1', apiBaseUrl: 'http://127.0.0.1:1', outbound: LOOPBACK }, 'customers', { start: null, end: new Date().toISOString() }, { max_results: 10 }, {})
      .catch((e: unknown) => e)) as ProviderApiError;
    expect(err.kind).toBe('unreachable');
    expect(err.retryable).toBe(true);
  });
});

describe('QuickBooks Online keyset reads against the fake QuickBooks', () => {
  let fake: FakeQuickbooks;
  beforeAll(async () => {
    fake = await startFakeQuickbooks();
    fake.accessTokens.add('t');
  });
  afterAll(() => fake.close());

  async function readAll(model: string, onPage?: (n: number) => void) {
    const access = { accessToken: 't', realmId: fake.realmId, apiBaseUrl: fake.url, outbound: LOOPBACK };
    const window = { start: null, end: new Date().toISOString() };
    const ids: string[] = [];
    let state: Record<string, unknown> | null = quickbooksOnlineAdapter.initialState();
    let pages = 0;
    let sweep = false;
    while (state) {
      const page = await quickbooksOnlineAdapter.fetchPage(access, model, window, state, {});
      ids.push(...page.records.rows.map((r) => r.remote_id!));
      sweep = Boolean(page.sweep);
      state = page.next;
      onPage?.(++pages);
    }
    return { ids, pages, sweep };
  }

  it('reads more than 1,000 records sharing one LastUpdatedTime second completely, once each (the rest of the second by Id)', async () => {
    const at = '2025-06-01T10:00:00-07:00';
    fake.records.Customer = Array.from({ length: 1250 }, (_, i) => qboCustomer(i + 1, at));
    fake.records.Customer.push(qboCustomer(5000, '2025-06-01T10:00:01-07:00'));
    const before = fake.queries.length;
    const { ids } = await readAll('customers');
    expect(ids).toHaveLength(1251);
    expect(new Set(ids).size).toBe(1251);
    const statements = fake.queries.slice(before).map((q) => q.statement);
    expect(statements).toContain(`SELECT * FROM Customer WHERE MetaData.LastUpdatedTime = '${at}' AND Id > '1000' ORDERBY Id MAXRESULTS 100`);
    expect(statements.at(-1)).toBe(`SELECT * FROM Customer WHERE MetaData.LastUpdatedTime > '${at}' ORDERBY MetaData.LastUpdatedTime, Id MAXRESULTS 100`);
    expect(fake.queries.slice(before).every((q) => q.maxResults <= 1000)).toBe(true);
  });

  it('misses nothing when records are edited, deleted and added between pages, and marks the last page of a full read for the sweep', async () => {
    const old = '2025-06-01T10:00:00Z';
    fake.records.Invoice = Array.from({ length: 250 }, (_, i) => qboInvoice(i + 1, 1, old, [{ qty: 1, unitPrice: 1, amount: 1 }], { TotalAmt: 1, Balance: 1 }));
    const { ids, sweep } = await readAll('invoices', (n) => {
      if (n !== 1) return;
      // After page 1: one read record is deleted, one read record and one unread record are edited, one is added.
      fake.records.Invoice.splice(0, 1);
      const now = new Date().toISOString();
      for (const id of ['2', '200']) fake.records.Invoice.find((r) => r.Id === id)!.MetaData.LastUpdatedTime = now;
      fake.records.Invoice.push(qboInvoice(999, 1, now, [], { TotalAmt: 5, Balance: 5 }));
    });
    const expected = [...fake.records.Invoice.map((r) => r.Id), '1'];
    expect(new Set(ids)).toEqual(new Set(expected));
    expect(sweep).toBe(true);
  });
});
