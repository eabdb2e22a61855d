/**
 * Bank statements as an API client meets them, through the gateway with the typed client
 * (@rp/client, generated from /openapi.json): the format detected from the file when `format` is
 * omitted (camt.053, MT940, BAI2, JSON; CSV needs its mapping; an undetectable file is a 422 that
 * stores nothing), the counts and totals a statement carries, and its transactions paged in a
 * stable order, scoped to the caller's organization. No SQL except for the one state no endpoint can
 * produce: statements stored before their totals were kept (migration 009 fills them in).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlatformClient, type PlatformClient } from '@rp/client';
import { createDb } from '@rp/platform';
import * as statementTotalsMigration from '../services/cash-app/migrations/009_statement_totals.js';
import { CSV_SEMICOLON_MAPPING } from './fixtures/bank-statements/csv-mappings.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;
let rp: PlatformClient;
let rpOther: PlatformClient;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/bank-statements/${name}`, import.meta.url));

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  org = await stack.onboard('Reading statements');
  other = await stack.onboard('Another reader');
  rp = createPlatformClient({ baseUrl: stack.gatewayUrl, token: org.token });
  rpOther = createPlatformClient({ baseUrl: stack.gatewayUrl, token: other.token });
});
afterAll(async () => stack?.close());

/**
 * Query parameters as sent on the wire. (The document types page numbers as the strings the query
 * carries or, with typed parameters, as integers; openapi-fetch serializes either the same way.)
 */
const q = (query: Record<string, string | number>) => query as never;

/** Uploads a file as multipart/form-data, `format` and `mapping` only when given. */
function uploadFile(client: PlatformClient, name: string, content: Buffer | string, fields: { format?: string; mapping?: object } = {}) {
  const form = new FormData();
  if (fields.format) form.set('format', fields.format);
  if (fields.mapping) form.set('mapping', JSON.stringify(fields.mapping));
  form.set('file', new Blob([content]), name);
  // The typed body is the JSON form; the multipart form is sent as built (openapi-fetch passes FormData through).
  return client.POST('/v2/bank-statements', { body: {} as never, bodySerializer: () => form });
}

async function statementCount(client: PlatformClient): Promise<number> {
  const { data } = await client.GET('/v2/bank-statements', { params: { query: q({ page_size: 1 }) } });
  return data!.total_records;
}

/** Polls the statement (without its transactions) until processing brought it to `ready`. */
async function waitReady(id: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { data, error } = await rp.GET('/v2/bank-statements/{statement_id}', { params: { path: { statement_id: id }, query: { transactions: 'omit' } } });
    if (error) throw new Error(JSON.stringify(error));
    if (data.status === 'ready') return data;
    if (data.status === 'failed' || Date.now() > deadline) throw new Error(`statement ${id} did not become ready: ${JSON.stringify(data)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every transaction of a statement, page by page. */
async function allTransactions(id: string, pageSize: number) {
  const pages = [];
  for (let page = 0; ; page++) {
    const { data, error } = await rp.GET('/v2/bank-statements/{statement_id}/transactions', {
      params: { path: { statement_id: id }, query: q({ page, page_size: pageSize }) },
    });
    if (error) throw new Error(JSON.stringify(error));
    pages.push(data);
    if (data.next_page === null) return pages;
    expect(data.next_page).toBe(page + 1);
  }
}

/** Counts and sums in cents of signed decimal strings, per currency: the totals a statement should carry. */
function expectedTotals(lines: { amount: string; currency: string }[]) {
  const by = new Map<string, { credit_count: number; credit: bigint; debit_count: number; debit: bigint }>();
  for (const l of lines) {
    const t = by.get(l.currency) ?? { credit_count: 0, credit: 0n, debit_count: 0, debit: 0n };
    const [whole, frac = ''] = l.amount.replace('-', '').split('.');
    const cents = BigInt(whole + frac.padEnd(2, '0').slice(0, 2)) * (l.amount.startsWith('-') ? -1n : 1n);
    if (cents > 0n) {
      t.credit_count++;
      t.credit += cents;
    } else if (cents < 0n) {
      t.debit_count++;
      t.debit += cents;
    }
    by.set(l.currency, t);
  }
  const fmt = (c: bigint) => `${c < 0n ? '-' : ''}${(c < 0n ? -c : c) / 100n}.${String((c < 0n ? -c : c) % 100n).padStart(2, '0')}`;
  return [...by.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, t]) => ({ currency, credit_count: t.credit_count, credit_total: fmt(t.credit), debit_count: t.debit_count, debit_total: fmt(t.debit) }));
}

describe('format detection', () => {
  it.each([
    ['camt053.xml', 'camt053'],
    ['mt940.txt', 'mt940'],
    ['bai2.txt', 'bai2'],
    ['statement.json', 'json'],
  ] as const)('reads %s without `format` as %s and processes it with counts and totals', async (name, format) => {
    const { data, error, response } = await uploadFile(rp, name, fixture(name));
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(response.status).toBe(200);
    expect(data!.format).toBe(format);
    const ready = await waitReady(data!.id);
    expect(ready.transaction_count).toBeGreaterThan(0);
    const [page] = await allTransactions(data!.id, 500);
    expect(page.total_records).toBe(ready.transaction_count);
    expect(ready.totals).toEqual(expectedTotals(page.data));
  });

  it('reads the same MT940 file with a SWIFT header block and CRLF line ends', async () => {
    const crlf = `{1:F01ABNANL2AXXXX0000000000}{2:O9401200261102ABNANL2AXXXX00000000002611021200N}{4:\r\n${fixture('mt940.txt').toString('utf8').replace(/:20:STMT20261102/, ':20:STMT20261102B').replace(/\n/g, '\r\n')}-}`;
    const { data, error } = await uploadFile(rp, 'swift.sta', crlf);
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(data!.format).toBe('mt940');
  });

  it('asks for the mapping of a CSV file (422, nothing stored), and reads it as CSV when the mapping comes', async () => {
    const before = await statementCount(rp);
    const refused = await uploadFile(rp, 'statement.csv', fixture('statement-semicolon.csv'));
    expect(refused.response.status).toBe(422);
    expect(refused.error).toMatchObject({ type: 'request-validation', errors: [{ loc: ['body', 'format'], type: 'format_undetected' }] });
    expect(refused.error!.errors![0].msg).toMatch(/looks like CSV.*mapping/);
    expect(await statementCount(rp)).toBe(before);

    const { data, error } = await uploadFile(rp, 'statement.csv', fixture('statement-semicolon.csv'), { mapping: CSV_SEMICOLON_MAPPING });
    expect(error, JSON.stringify(error)).toBeUndefined();
    expect(data!.format).toBe('csv');
    expect((await waitReady(data!.id)).transaction_count).toBe(3);
  });

  it('refuses an undetectable file with 422 naming what it saw, and stores nothing', async () => {
    const before = await statementCount(rp);
    const camt056 = fixture('camt053.xml').toString('utf8').replace('camt.053.001.02', 'camt.056.001.02');
    const cases: [string, Buffer | string, RegExp][] = [
      ['recall.xml', camt056, /camt\.056\.001\.02.*not a camt\.053/],
      ['other.xml', '<?xml version="1.0"?><invoice><id>1</id></invoice>', /XML document without the camt\.053 namespace/],
      ['empty.txt', '', /empty/],
      ['blob.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), /could not be detected/],
      ['letter.txt', 'Dear customer,\nplease find our statement attached.\n', /could not be detected/],
    ];
    for (const [name, content, msg] of cases) {
      const { response, error } = await uploadFile(rp, name, content);
      expect(response.status, name).toBe(422);
      expect(error, name).toMatchObject({ type: 'request-validation', status: 422, errors: [{ loc: ['body', 'format'] }] });
      expect(error!.errors![0].msg, name).toMatch(msg);
    }
    expect(await statementCount(rp)).toBe(before);
  });

  it('still takes an explicit format, and reports a file that is not in it as malformed', async () => {
    const { response, error } = await uploadFile(rp, 'mt940.txt', fixture('mt940.txt'), { format: 'bai2' });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ type: 'request-validation', errors: [{ type: 'statement_invalid' }] });
  });
});

describe('transactions, paged', () => {
  const LINES = 1050;
  let statementId: string;
  let lines: { amount: string; currency: 'USD' | 'EUR'; bank_reference: string }[];

  beforeAll(async () => {
    lines = Array.from({ length: LINES }, (_, i) => ({
      amount: i % 7 === 3 ? `-${(i % 50) + 1}.${String(i % 100).padStart(2, '0')}` : `${100 + i}.${String((i * 37) % 100).padStart(2, '0')}`,
      currency: i % 5 === 0 ? ('USD' as const) : ('EUR' as const),
      bank_reference: `PAGED-${i}`,
    }));
    const { data, error } = await rp.POST('/v2/bank-statements', {
      body: {
        account: 'DE02120300000000202051',
        currency: 'EUR',
        statement_number: 'PAGED-1',
        transactions: lines.map((l) => ({ ...l, booking_date: '2026-11-10', counterparty_name: 'Nobody Matching GmbH' })),
      },
    });
    expect(error, JSON.stringify(error)).toBeUndefined();
    statementId = data!.id;
    await waitReady(statementId);
  });

  it('pages every line once, in file order, with the kernel envelope', async () => {
    const pages = await allTransactions(statementId, 500);
    expect(pages.map((p) => p.data.length)).toEqual([500, 500, 50]);
    expect(pages.map((p) => [p.current_page, p.next_page, p.total_records])).toEqual([
      [0, 1, LINES],
      [1, 2, LINES],
      [2, null, LINES],
    ]);
    const all = pages.flatMap((p) => p.data);
    expect(all.map((t) => t.sequence)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    expect(new Set(all.map((t) => t.id)).size).toBe(LINES);
    expect(all.map((t) => [t.bank_reference, t.amount, t.currency])).toEqual(
      lines.map((l) => [l.bank_reference, l.amount, l.currency]),
    );
    expect(all.every((t) => t.object === 'bank_transaction' && t.statement_id === statementId)).toBe(true);

    // Default page size 50; the same page twice is the same lines (stable order).
    const first = await rp.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: statementId } } });
    expect(first.data!.data.map((t) => t.id)).toEqual(all.slice(0, 50).map((t) => t.id));
    const again = await rp.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: statementId }, query: q({ page: 3 }) } });
    expect(again.data!.data.map((t) => t.id)).toEqual(all.slice(150, 200).map((t) => t.id));
    const beyond = await rp.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: statementId }, query: q({ page: 100 }) } });
    expect(beyond.data).toMatchObject({ data: [], current_page: 100, next_page: null, total_records: LINES });
  });

  it('carries counts and totals per currency, inlines at most 1000 lines, and omits them on request', async () => {
    const { data } = await rp.GET('/v2/bank-statements/{statement_id}', { params: { path: { statement_id: statementId } } });
    expect(data!.transaction_count).toBe(LINES);
    expect(data!.totals).toEqual(expectedTotals(lines));
    expect(data!.totals.map((t) => t.currency)).toEqual(['EUR', 'USD']);
    expect(data!.transactions).toHaveLength(1000);
    expect(data!.transactions_truncated).toBe(true);
    expect(data!.transactions![999].sequence).toBe(1000);

    const omitted = await rp.GET('/v2/bank-statements/{statement_id}', { params: { path: { statement_id: statementId }, query: { transactions: 'omit' } } });
    expect(omitted.data).not.toHaveProperty('transactions');
    expect(omitted.data!.totals).toEqual(data!.totals);

    const listed = await rp.GET('/v2/bank-statements', { params: { query: q({ page_size: 200 }) } });
    expect(listed.data!.data.find((s) => s.id === statementId)!.totals).toEqual(data!.totals);
  });

  it('refuses bad paging with 422 and another organization\'s or an unknown statement with 404', async () => {
    for (const query of [{ page_size: '501' }, { page_size: '0' }, { page: '-1' }, { page: 'x' }] as Record<string, string>[]) {
      const { response, error } = await rp.GET('/v2/bank-statements/{statement_id}/transactions', {
        params: { path: { statement_id: statementId }, query: q(query) },
      });
      expect(response.status, JSON.stringify(query)).toBe(422);
      expect(error).toMatchObject({ type: 'request-validation' });
    }
    for (const [client, id] of [
      [rpOther, statementId],
      [rp, '01900000-0000-7000-8000-000000000000'],
    ] as const) {
      const { response, error } = await client.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: id } } });
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ type: 'entity-not-found' });
    }
    // a malformed id is a validation error (ids are validated as ids), not an unknown statement
    const malformed = await rp.GET('/v2/bank-statements/{statement_id}/transactions', { params: { path: { statement_id: 'not-a-statement' } } });
    expect(malformed.response.status).toBe(422);
    expect(malformed.error).toMatchObject({ type: 'request-validation' });
    const otherList = await rpOther.GET('/v2/bank-statements', {});
    expect(otherList.data!.data.map((s) => s.id)).not.toContain(statementId);
  });
});

describe('statements stored before their totals were kept', () => {
  it('get their counts and totals from migration 009', async () => {
    const listed = await rp.GET('/v2/bank-statements', { params: { query: q({ page_size: 200 }) } });
    const before = listed.data!.data.filter((st) => st.transaction_count > 0);
    expect(before.length).toBeGreaterThan(4);
    expect(before.every((st) => st.totals.length > 0)).toBe(true);
    // The schema as it was before 009, with these statements in it; then the migration.
    await stack.sql('ALTER TABLE cash_app.bank_statements DROP COLUMN totals');
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 1 });
    try {
      await statementTotalsMigration.up(db);
    } finally {
      await db.destroy();
    }
    const after = (await rp.GET('/v2/bank-statements', { params: { query: q({ page_size: 200 }) } })).data!.data;
    for (const st of before) expect(after.find((a) => a.id === st.id)!.totals, st.id).toEqual(st.totals);
  });
});
