/**
 * Bank statements end to end through the gateway: upload in every format, processing by the
 * bankStatement workflow on a real worker, duplicates, list/get/approve and every delete rule,
 * including a delete while the workflow is storing transactions and a worker killed mid-way; line
 * identity when a bank reuses its references every day; an upload that dies between starting the
 * workflow and committing (injected at domain level: no API client can kill the server there); a
 * statement delete racing a payment approval in both orders.
 *
 * Written with SQL where no endpoint can produce the state: a synced statement (no bank connection
 * adapter yet), a stored file that no longer parses, a statement stranded `uploaded` by the earlier
 * upload code, a second payment for a transaction (to show the database refuses it). The races are
 * ordered by holding a row lock from a separate database session (an uncommitted row, a FOR UPDATE)
 * at the point where one request must wait for the other.
 *
 * Processing is made observable by the cash-app throttle BANK_STATEMENT_CHUNK_SIZE=2 /
 * BANK_STATEMENT_CHUNK_PAUSE_MS=150 (documented in config.ts): the store activity writes two lines,
 * heartbeats, then sleeps (cancellably) before the next chunk.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { CancelledFailure } from '@temporalio/common';
import { connectTemporal, createDb, type Db, type TemporalHandle } from '@rp/platform';
import { bankStatementWorkflowId, ENTITY_ID, ORGANIZATION_ID, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { CSV_DEBIT_CREDIT_MAPPING, CSV_SEMICOLON_MAPPING } from './fixtures/bank-statements/csv-mappings.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { createBankStatementActivities } from '../services/cash-app/src/activities/bank-statement.js';
import { createMatchingActivities } from '../services/cash-app/src/activities/matching.js';
import { uploadStatement } from '../services/cash-app/src/domain/bank-statements.js';
import { parseStatement, storedFile } from '../services/cash-app/src/parsers/index.js';
import { replayHistory } from './support/histories.js';

let stack: TestStack;
let org: Org;
let other: Org;
let memberToken: string;
let temporal: TemporalHandle;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/bank-statements/${name}`, import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function upload(token: string, format: string, name: string, content: Buffer | string, mapping?: object) {
  const form = new FormData();
  form.set('format', format);
  if (mapping) form.set('mapping', JSON.stringify(mapping));
  form.set('file', new Blob([content]), name);
  const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

function waitFor(token: string, id: string, statuses: string[], timeoutMs = 45_000): Promise<any> {
  return waitForStatement(stack, token, id, { statuses, timeoutMs });
}

async function rowCounts(organizationId: string) {
  const [s] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [organizationId]);
  const [t] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE organization_id = $1`, [organizationId]);
  return { statements: s.n as number, transactions: t.n as number };
}

function jsonStatement(account: string, n: number, prefix: string) {
  return {
    account,
    currency: 'EUR',
    transactions: Array.from({ length: n }, (_, i) => ({
      amount: `${100 + i}.25`,
      booking_date: '2026-11-10',
      counterparty_name: `Payer ${i}`,
      remittance_information: `INV-${prefix}-${i}`,
      bank_reference: `${prefix}-${i}`,
    })),
  };
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: { BANK_STATEMENT_CHUNK_SIZE: '2', BANK_STATEMENT_CHUNK_PAUSE_MS: '150' } });
  [org, other] = await Promise.all([stack.onboard('Statement Org'), stack.onboard('Other Org')]);
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  const member = await stack.request('POST', '/v2/users', { token: org.token, body: { email: 'member@statements.example', name: 'Max Member', role: 'member' } });
  expect(member.status).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  memberToken = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', member.body.id], stack.env)) as { token: string }).token;
  // An open invoice the CAMT sample's first deposit pays ("Invoice INV-1001", 1250.00 EUR).
  expect((await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'C-ACME', name1: 'Acme GmbH' })])).status).toBe(200);
  const inv = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: 'INV-1001', reference: 'INV-1001', customer_code: 'C-ACME', amount_in_document_currency: 1250, amount_in_local_currency: 1250 }),
  ]);
  expect(inv.body.results[0]).toMatchObject({ success: true });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('upload and processing', () => {
  it('processes a CAMT.053 file to ready with exact amounts, classification and the workflow conventions', async () => {
    const res = await upload(org.token, 'camt053', 'camt053.xml', fixture('camt053.xml'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'bank_statement',
      status: 'uploaded',
      format: 'camt053',
      source: 'upload',
      file_name: 'camt053.xml',
      account_identifier: 'DE89370400440532013000',
      currency: 'EUR',
      opening_balance: '10000.00',
      closing_balance: '12007.67',
      statement_number: '221',
      statement_date: '2026-11-04',
      workflow_id: `bank-statement-${res.body.id}`,
    });
    const s = await waitFor(org.token, res.body.id, ['ready', 'failed']);
    expect(s.status).toBe('ready');
    expect(s.error).toBeNull();
    expect(s.transaction_count).toBe(5);
    expect(s.transactions.map((t: any) => [t.amount, t.currency, t.is_payment])).toEqual([
      ['1250.00', 'EUR', true],
      ['-45.50', 'EUR', false],
      ['3.17', 'EUR', false], // interest (ACMT/MDOP/INTR)
      ['500.00', 'EUR', true],
      ['300.00', 'EUR', true],
    ]);
    expect(s.transactions[0]).toMatchObject({
      object: 'bank_transaction',
      sequence: 1,
      booking_date: '2026-11-02',
      value_date: '2026-11-02',
      counterparty_name: 'Acme GmbH',
      counterparty_iban: 'DE44500105175407324931',
      remittance_information: 'Invoice INV-1001',
      bank_reference: '2026110200001',
      end_to_end_id: 'E2E-INV-1001',
      unique_import_id: 'DE89370400440532013000:stmt:STMT-20261104-DE89:2026110200001:1',
      bank_account_id: s.bank_account_id,
      is_deposit: true,
    });
    // The workflow's matching step proposed a payment for the deposit that names the open invoice.
    expect(s.transactions[0].payments).toEqual([expect.objectContaining({ status: 'unapproved', amount: '1250.00', currency: 'EUR' })]);
    expect(s.transactions[1].payments).toEqual([]);
    const [account] = await stack.sql(`SELECT account_identifier, iban, bank_code, currency FROM cash_app.bank_accounts WHERE id = $1 AND organization_id = $2`, [s.bank_account_id, org.organizationId]);
    expect(account).toEqual({ account_identifier: 'DE89370400440532013000', iban: 'DE89370400440532013000', bank_code: 'COBADEFFXXX', currency: 'EUR' });

    const handle = temporal.client.workflow.getHandle(bankStatementWorkflowId(s.id));
    expect(await handle.result()).toMatchObject({ status: 'ready', total: 5, stored: 5, payments: 3, proposed: 1 });
    const d = await handle.describe();
    expect(d.taskQueue).toBe(TASK_QUEUES.cashApp);
    expect(d.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);
    expect(d.typedSearchAttributes.get(ENTITY_ID)).toBe(s.id);
    const history = await handle.fetchHistory();
    await replayHistory(stack, d.workflowId, history, 'bank-statement.json');
  });

  it('processes BAI2, MT940, both CSV layouts, a JSON file and the JSON form', async () => {
    const cases: [string, () => Promise<{ status: number; body: any }>, [string, string, boolean][]][] = [
      ['bai2', () => upload(org.token, 'bai2', 'bai2.txt', fixture('bai2.txt')), [['1500.00', 'USD', true], ['-25.00', 'USD', false], ['15.00', 'USD', false], ['275.00', 'USD', true]]],
      ['mt940', () => upload(org.token, 'mt940', 'mt940.txt', fixture('mt940.txt')), [['1250.00', 'EUR', true], ['-99.95', 'EUR', false], ['200.00', 'EUR', false], ['75.00', 'EUR', true]]],
      ['csv', () => upload(org.token, 'csv', 'statement-semicolon.csv', fixture('statement-semicolon.csv'), CSV_SEMICOLON_MAPPING), [['1234.56', 'EUR', true], ['-12.00', 'EUR', false], ['500.00', 'EUR', true]]],
      ['csv', () => upload(org.token, 'csv', 'statement-debit-credit.csv', fixture('statement-debit-credit.csv'), CSV_DEBIT_CREDIT_MAPPING), [['2500.00', 'USD', true], ['-19.99', 'USD', false]]],
      ['json', () => upload(org.token, 'json', 'statement.json', fixture('statement.json')), [['900.00', 'CHF', true], ['-30.00', 'CHF', false]]],
      [
        'json',
        () =>
          stack.request('POST', '/v2/bank-statements', {
            token: org.token,
            body: { account: 'GB33BUKB20201555555555', currency: 'GBP', transactions: [{ amount: '42.10', booking_date: '2026-11-06', remittance_information: 'INV-7001', counterparty_name: 'Mu Ltd' }, { amount: -5, value_date: '2026-11-06', remittance_information: 'Refund to customer' }] },
          }),
        [['42.10', 'GBP', true], ['-5.00', 'GBP', false]],
      ],
    ];
    const uploaded = [];
    for (const [format, send, expected] of cases) {
      const res = await send();
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.format).toBe(format);
      uploaded.push({ id: res.body.id as string, expected });
    }
    for (const { id, expected } of uploaded) {
      const s = await waitFor(org.token, id, ['ready', 'failed']);
      expect(s.status).toBe('ready');
      expect(s.transactions.map((t: any) => [t.amount, t.currency, t.is_payment])).toEqual(expected);
      expect(s.transaction_count).toBe(expected.length);
    }
    const mt = await stack.request('GET', `/v2/bank-statements/${uploaded[1].id}`, { token: org.token });
    expect(mt.body.transactions[2]).toMatchObject({ transaction_code: 'R:NTRF', counterparty_name: 'Epsilon AG', unique_import_id: expect.stringMatching(/^NL91ABNA0417164300:sha256:[0-9a-f]{64}:1$/) });
  });

  it('refuses a malformed file with 422 naming the line or element, and stores nothing', async () => {
    const before = await rowCounts(org.organizationId);
    const bai = fixture('bai2.txt').toString().replace('16,475,2500,0', '16,475,25X0,0');
    let res = await upload(org.token, 'bai2', 'bad.bai', bai);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', errors: [{ loc: ['body', 'file', 'line 5'], msg: expect.stringContaining('line 5: amount "25X0"') }] });

    res = await upload(org.token, 'mt940', 'bad.sta', fixture('mt940.txt').toString().replace(':61:261103C75,00', ':61:261103C75.00'));
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'file', 'line 11']);

    res = await upload(org.token, 'camt053', 'bad.xml', fixture('camt053.xml').toString().replace('<CdtDbtInd>DBIT</CdtDbtInd>', '<CdtDbtInd>DEBIT</CdtDbtInd>'));
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'file', 'Document/BkToCstmrStmt/Stmt/Ntry[2]/CdtDbtInd']);
    expect(res.body.detail).toContain('Ntry[2]/CdtDbtInd');

    res = await upload(org.token, 'csv', 'bad.csv', fixture('statement-semicolon.csv').toString().replace('04.11.2026;04.11.2026', '2026-11-04;2026-11-04'), CSV_SEMICOLON_MAPPING);
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'file', 'line 4']);

    res = await upload(org.token, 'csv', 'nomap.csv', fixture('statement-semicolon.csv'));
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'mapping']);

    res = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: { account: 'X1', currency: 'EUR', transactions: [{ amount: '1,5', booking_date: '2026-11-01' }] } });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'transactions', 0, 'amount']);

    expect(await rowCounts(org.organizationId)).toEqual(before);
  });

  it('takes files larger than the general body limit through the gateway', async () => {
    // 1.5 MB of CSV (the gateway's BODY_LIMIT_BYTES is 1 MiB; uploads get UPLOAD_LIMIT_BYTES): read to its last line.
    const lines = ['Date;Amount;Purpose'];
    for (let i = 0; i < 40_000; i++) lines.push(`01.11.2026;1,00;Invoice number INV-${String(i).padStart(8, '0')}`);
    lines.push('01.11.2026;one;bad');
    const res = await upload(org.token, 'csv', 'big.csv', lines.join('\n'), { account: 'BIG1', date_column: 'Date', amount_column: 'Amount', currency: 'EUR', remittance_column: 'Purpose', delimiter: ';', decimal_separator: ',', date_format: 'DD.MM.YYYY' });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].loc).toEqual(['body', 'file', 'line 40002']);
  });

  it('imports the same file once (409 naming the first) and stores only new lines of an overlapping statement', async () => {
    const first = await stack.request('GET', '/v2/bank-statements?format=camt053', { token: org.token });
    const camt = first.body.data.find((s: any) => s.format === 'camt053');
    const again = await upload(org.token, 'camt053', 'camt053-again.xml', fixture('camt053.xml'));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ type: 'conflict', detail: expect.stringContaining(camt.id) });

    // The JSON statement of the CHF account again, plus one new line: only the new line is stored.
    const doc = JSON.parse(fixture('statement.json').toString());
    doc.transactions.push({ amount: '15.00', booking_date: '2026-11-06', remittance_information: 'INV-6002', bank_reference: 'CHREF-6002' });
    doc.closing_balance = '1885.00'; // opening + entries = closing (the upload checks that the balances reconcile)
    const overlap = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: doc });
    expect(overlap.status).toBe(200);
    const s = await waitFor(org.token, overlap.body.id, ['ready', 'failed']);
    expect(s.status).toBe('ready');
    expect(s.transaction_count).toBe(1);
    expect(s.transactions.map((t: any) => [t.amount, t.bank_reference])).toEqual([['15.00', 'CHREF-6002']]);
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE organization_id = $1 AND unique_import_id LIKE 'CH9300762011623852957:%'`, [org.organizationId]);
    expect(n).toBe(3);
  });
});

describe('list, get, approve', () => {
  it('lists with pagination and filters, gets with transactions, approves only ready statements', async () => {
    const all = await stack.request('GET', '/v2/bank-statements?page_size=2', { token: org.token });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ current_page: 0, next_page: 1 });
    expect(all.body.data).toHaveLength(2);
    expect(all.body.total_records).toBeGreaterThanOrEqual(8);
    const ready = await stack.request('GET', '/v2/bank-statements?status=ready&page_size=200', { token: org.token });
    expect(ready.body.data.every((s: any) => s.status === 'ready')).toBe(true);
    const camt = ready.body.data.find((s: any) => s.format === 'camt053');
    const byAccount = await stack.request('GET', `/v2/bank-statements?bank_account_id=${camt.bank_account_id}`, { token: org.token });
    expect(byAccount.body.data.map((s: any) => s.id)).toEqual([camt.id]);
    expect((await stack.request('GET', '/v2/bank-statements?status=nope', { token: org.token })).status).toBe(422);
    expect((await stack.request('GET', '/v2/bank-statements', { token: other.token })).body.total_records).toBe(0);

    expect((await stack.request('GET', `/v2/bank-statements/${camt.id}`, { token: other.token })).status).toBe(404);
    expect((await stack.request('GET', '/v2/bank-statements/not-a-uuid', { token: org.token })).status).toBe(422); // ids are validated as ids
    expect((await stack.request('POST', `/v2/bank-statements/${camt.id}/approve`, { token: other.token })).status).toBe(404);

    const approved = await stack.request('POST', `/v2/bank-statements/${camt.id}/approve`, { token: org.token });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', approved_by: org.userId, approved_at: expect.stringMatching(/Z$/) });
    const twice = await stack.request('POST', `/v2/bank-statements/${camt.id}/approve`, { token: org.token });
    expect(twice).toMatchObject({ status: 409, body: { type: 'conflict' } });
  });
});

describe('delete', () => {
  it('refuses an approved statement with 409 and changes nothing', async () => {
    const [approved] = (await stack.request('GET', '/v2/bank-statements?status=approved', { token: org.token })).body.data;
    const res = await stack.request('DELETE', `/v2/bank-statements/${approved.id}`, { token: org.token });
    expect(res).toMatchObject({ status: 409, body: { type: 'conflict' } });
    const after = await stack.request('GET', `/v2/bank-statements/${approved.id}`, { token: org.token });
    expect(after.body).toMatchObject({ status: 'approved', transaction_count: 5 });
    expect(after.body.transactions).toHaveLength(5);
  });

  it('lets only an admin delete a synced statement, with its transactions and unapproved payments', async () => {
    // No bank-connection adapter exists yet: the synced statement is written as one would arrive.
    const [{ id: accountId }] = await stack.sql(`SELECT id FROM cash_app.bank_accounts WHERE organization_id = $1 LIMIT 1`, [org.organizationId]);
    const id = '01938f5e-1111-7000-8000-000000000001';
    const txId = '01938f5e-1111-7000-8000-000000000002';
    await stack.sql(
      `INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, source, format, status, currency, transaction_count) VALUES ($1, $2, $3, 'connection', 'camt053', 'synced', 'EUR', 1)`,
      [id, org.organizationId, accountId],
    );
    await stack.sql(
      `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, bank_account_id, unique_import_id, sequence, amount, currency, booking_date) VALUES ($1, $2, $3, $4, 'synced:1', 1, 70.00, 'EUR', '2026-11-07')`,
      [txId, org.organizationId, id, accountId],
    );
    await stack.sql(
      `INSERT INTO cash_app.payments (id, organization_id, bank_transaction_id, status, amount, currency) VALUES ('01938f5e-1111-7000-8000-000000000003', $1, $2, 'unapproved', 70.00, 'EUR')`,
      [org.organizationId, txId],
    );
    const member = await stack.request('DELETE', `/v2/bank-statements/${id}`, { token: memberToken });
    expect(member).toMatchObject({ status: 403, body: { type: 'forbidden' } });
    expect((await stack.request('GET', `/v2/bank-statements/${id}`, { token: org.token })).body).toMatchObject({ status: 'synced', transactions: [{ id: txId, payments: [{ status: 'unapproved', amount: '70.00' }] }] });

    expect((await stack.request('DELETE', `/v2/bank-statements/${id}`, { token: other.token })).status).toBe(404);
    const admin = await stack.request('DELETE', `/v2/bank-statements/${id}`, { token: org.token });
    expect(admin.status).toBe(204);
    expect(admin.text).toBe('');
    expect((await stack.request('GET', `/v2/bank-statements/${id}`, { token: org.token })).status).toBe(404);
    expect(await stack.sql(`SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1`, [id])).toEqual([]);
    expect(await stack.sql(`SELECT id FROM cash_app.payments WHERE bank_transaction_id = $1`, [txId])).toEqual([]);
  });

  it('lets a member delete a ready statement; unknown and other-organization ids are 404', async () => {
    const res = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: jsonStatement('DE02100100109307118603', 3, 'MEMBERDEL') });
    const s = await waitFor(org.token, res.body.id, ['ready']);
    expect((await stack.request('DELETE', `/v2/bank-statements/${s.id}`, { token: other.token })).status).toBe(404);
    expect((await stack.request('DELETE', '/v2/bank-statements/01938f5e-0000-7000-8000-000000000000', { token: org.token })).status).toBe(404);
    expect((await stack.request('DELETE', `/v2/bank-statements/${s.id}`, { token: memberToken })).status).toBe(204);
    expect(await stack.sql(`SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1`, [s.id])).toEqual([]);
  });

  it('cancels the processing workflow and removes everything, with nothing appearing afterwards', async () => {
    // 200 lines = 100 chunks of 150 ms: the store activity is still running when the DELETE comes, and the
    // cancellation reaches it through a heartbeat (sent at most every 0.5 s, see the cash-app worker options).
    const res = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: jsonStatement('DE12500105170648489890', 200, 'CANCEL') });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    // Wait until the store activity has written some (not all) lines.
    const deadline = Date.now() + 30_000;
    let stored = 0;
    while (Date.now() < deadline) {
      [{ n: stored }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
      if (stored > 0) break;
      await sleep(50);
    }
    expect(stored).toBeGreaterThan(0);
    expect(stored).toBeLessThan(200);
    expect((await stack.request('GET', `/v2/bank-statements/${id}`, { token: org.token })).body.status).toBe('processing');

    const del = await stack.request('DELETE', `/v2/bank-statements/${id}`, { token: org.token });
    expect(del.status).toBe(204);
    const handle = temporal.client.workflow.getHandle(bankStatementWorkflowId(id));
    const d = await handle.describe();
    expect(d.status.name).toBe('CANCELLED');
    // The store activity itself acknowledged the cancellation (it did not run to completion).
    const events = (await handle.fetchHistory()).events!;
    const scheduled = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes!.activityType!.name]));
    const cancelled = events.filter((e) => e.activityTaskCanceledEventAttributes).map((e) => scheduled.get(String(e.activityTaskCanceledEventAttributes!.scheduledEventId)));
    expect(cancelled).toEqual(['storeStatementTransactions']);
    expect(events.some((e) => e.activityTaskCompletedEventAttributes)).toBe(false);
    await replayHistory(stack, d.workflowId, await handle.fetchHistory(), 'bank-statement-cancelled.json');
    for (let i = 0; i < 10; i++) {
      expect(await stack.sql(`SELECT id FROM cash_app.bank_transactions WHERE statement_id = $1 OR unique_import_id LIKE 'DE12500105170648489890:%'`, [id])).toEqual([]);
      expect(await stack.sql(`SELECT p.id FROM cash_app.payments p JOIN cash_app.bank_transactions t ON t.id = p.bank_transaction_id WHERE t.statement_id = $1`, [id])).toEqual([]);
      expect(await stack.sql(`SELECT id FROM cash_app.bank_statements WHERE id = $1`, [id])).toEqual([]);
      await sleep(300);
    }
  });
});

describe('resilience', () => {
  it('resumes on a new worker after the worker dies mid-way, losing and duplicating nothing', async () => {
    const res = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: jsonStatement('DE27100777770209299700', 40, 'RESUME') });
    const id = res.body.id as string;
    const deadline = Date.now() + 30_000;
    let stored = 0;
    while (Date.now() < deadline) {
      [{ n: stored }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
      if (stored >= 4) break;
      await sleep(50);
    }
    expect(stored).toBeGreaterThanOrEqual(4);
    await stack.workers['cash-app']!.close();
    const [{ n: atStop }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
    expect(atStop).toBeLessThan(40);
    expect((await stack.request('GET', `/v2/bank-statements/${id}`, { token: org.token })).body.status).toBe('processing');

    await stack.startWorker('cash-app');
    const s = await waitFor(org.token, id, ['ready', 'failed'], 90_000);
    expect(s.status).toBe('ready');
    expect(s.transaction_count).toBe(40);
    expect(s.transactions.map((t: any) => t.sequence)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(s.transactions.map((t: any) => t.amount)).toEqual(Array.from({ length: 40 }, (_, i) => `${100 + i}.25`));
    const [{ n, distinct }] = await stack.sql(
      `SELECT count(*)::int AS n, count(DISTINCT unique_import_id)::int AS distinct FROM cash_app.bank_transactions WHERE unique_import_id LIKE 'DE27100777770209299700:%'`,
    );
    expect({ n, distinct }).toEqual({ n: 40, distinct: 40 });
  }, 120_000);

  it('marks a statement failed with the error when processing fails after retries', async () => {
    // A stored file that no longer parses (written directly: uploads are validated first).
    const [{ id: accountId }] = await stack.sql(`SELECT id FROM cash_app.bank_accounts WHERE organization_id = $1 LIMIT 1`, [org.organizationId]);
    const id = '01938f5e-2222-7000-8000-000000000001';
    await stack.sql(
      `INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, content, currency, workflow_id) VALUES ($1, $2, $3, 'bai2', 'uploaded', $4, 'USD', $5)`,
      [id, org.organizationId, accountId, Buffer.from('01,broken/\n'), bankStatementWorkflowId(id)],
    );
    const { bankStatement } = await import('@rp/workflows');
    const result = await temporal.client.workflow.execute(bankStatement, { taskQueue: TASK_QUEUES.cashApp, workflowId: bankStatementWorkflowId(id), args: [{ organizationId: org.organizationId, statementId: id }] });
    expect(result).toMatchObject({ status: 'failed', error: expect.stringContaining('line 1') });
    const s = await stack.request('GET', `/v2/bank-statements/${id}`, { token: org.token });
    expect(s.body).toMatchObject({ status: 'failed', error: expect.stringContaining('line 1'), transactions: [] });
  });
});

// ---------------------------------------------------------------------------------------------
// Line identity: banks that restart their reference counter every day

/** One day's statement of `account` with lines (reference, amount) in each format. */
const dayFiles = {
  camt053(account: string, day: string, lines: [string, string][]) {
    const entries = lines
      .map(
        ([ref, amount]) => `<Ntry><Amt Ccy="EUR">${amount}</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>${day}</Dt></BookgDt>
        <AcctSvcrRef>${ref}</AcctSvcrRef><NtryDtls><TxDtls><RmtInf><Ustrd>Payment ${ref}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>`,
      )
      .join('\n');
    return `<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><GrpHdr><MsgId>M-${day}</MsgId><CreDtTm>${day}T18:00:00</CreDtTm></GrpHdr>
<Stmt><Id>STMT-${day}</Id><CreDtTm>${day}T18:00:00</CreDtTm><Acct><Id><IBAN>${account}</IBAN></Id><Ccy>EUR</Ccy></Acct>
${entries}
</Stmt></BkToCstmrStmt></Document>`;
  },
  mt940(account: string, day: string, lines: [string, string][]) {
    const yymmdd = day.slice(2).replace(/-/g, '');
    const body = lines.map(([ref, amount]) => `:61:${yymmdd}C${amount.replace('.', ',')}NTRFNONREF//${ref}\n:86:Payment ${ref}`).join('\n');
    const closing = lines.reduce((sum, [, amount]) => sum + Math.round(Number(amount) * 100), 0);
    return `:20:STMT${yymmdd}\n:25:${account}\n:28C:1/1\n:60F:C${yymmdd}EUR0,00\n${body}\n:62F:C${yymmdd}EUR${Math.floor(closing / 100)},${String(closing % 100).padStart(2, '0')}\n-`;
  },
  bai2(account: string, day: string, lines: [string, string][]) {
    const yymmdd = day.slice(2).replace(/-/g, '');
    const cents = lines.map(([, amount]) => Math.round(Number(amount) * 100));
    const total = cents.reduce((a, b) => a + b, 0);
    const details = lines.map(([ref], i) => `16,195,${cents[i]},0,${ref},,PAYMENT ${ref}/`);
    const accountRecords = 2 + details.length;
    return [
      `01,BANK,CUST,${yymmdd},0800,1,80,,2/`,
      `02,CUST,021000021,1,${yymmdd},2400,USD,2/`,
      `03,${account},USD,/`,
      ...details,
      `49,${total},${accountRecords}/`,
      `98,${total},1,${accountRecords + 2}/`,
      `99,${total},1,${accountRecords + 4}/`,
    ].join('\n');
  },
  csv(_account: string, day: string, lines: [string, string][]) {
    return [`Date,Amount,Purpose,Reference`, ...lines.map(([ref, amount]) => `${day},${amount},Payment ${ref},${ref}`)].join('\n');
  },
  json(account: string, day: string, lines: [string, string][]) {
    return JSON.stringify({ account, currency: 'EUR', statement_number: day, transactions: lines.map(([ref, amount]) => ({ amount, booking_date: day, remittance_information: `Payment ${ref}`, bank_reference: ref })) });
  },
};

describe('line identity', () => {
  it('stores both days when the bank restarts its references every day, in every format; the same lines again store nothing', async () => {
    const accounts = { camt053: 'DE91100000000123456789', mt940: 'NL20INGB0001234567', bai2: '5550001111', csv: 'CSV-DAILY-1', json: 'GB82WEST12345698765432' } as const;
    const lines: [string, string][] = [
      ['1', '100.00'],
      ['2', '250.00'],
    ];
    for (const format of Object.keys(accounts) as (keyof typeof accounts)[]) {
      const account = accounts[format];
      const mapping = format === 'csv' ? { account, date_column: 'Date', amount_column: 'Amount', currency: 'EUR', remittance_column: 'Purpose', reference_column: 'Reference' } : undefined;
      // `again`: the same day exported once more, as another file (a trailing line break: another SHA-256)
      const send = (day: string, again = false) => upload(org.token, format, `${day}.${format}`, dayFiles[format](account, day, lines) + (again ? '\n' : ''), mapping);
      const day1 = await send('2026-11-09');
      expect(day1.status, `${format}: ${JSON.stringify(day1.body)}`).toBe(200);
      expect((await waitFor(org.token, day1.body.id, ['ready'])).transaction_count, format).toBe(2);
      // The next day: the same references "1" and "2" (and the same amounts) are two new lines.
      const day2 = await send('2026-11-10');
      expect(day2.status, format).toBe(200);
      const s2 = await waitFor(org.token, day2.body.id, ['ready']);
      expect(s2.transaction_count, format).toBe(2);
      expect(s2.transactions.map((t: any) => [t.bank_reference, t.booking_date]), format).toEqual([
        ['1', '2026-11-10'],
        ['2', '2026-11-10'],
      ]);
      // Day 1 exported again: nothing new.
      const again = await send('2026-11-09', true);
      expect(again.status, `${format}: ${JSON.stringify(again.body)}`).toBe(200);
      expect(again.body.file_sha256).not.toBe(day1.body.file_sha256);
      expect((await waitFor(org.token, again.body.id, ['ready'])).transaction_count, format).toBe(0);
      const [{ n }] = await stack.sql(
        `SELECT count(*)::int AS n FROM cash_app.bank_transactions t JOIN cash_app.bank_accounts a ON a.id = t.bank_account_id WHERE t.organization_id = $1 AND a.account_identifier = $2`,
        [org.organizationId, account],
      );
      expect(n, format).toBe(4);
    }
  }, 180_000);
});

describe('line identity of lines stored before', () => {
  it('gives lines stored under the old reference-only id the new form, so an overlapping file stores only its new lines', async () => {
    // A line as the previous code stored it (id `<account>:ref:<reference>`): written directly.
    const account = 'DE11520513735120710131';
    const [{ id: accountId }] = await stack.sql(
      `INSERT INTO cash_app.bank_accounts (id, organization_id, account_identifier, iban, currency) VALUES ('01938f5e-5555-7000-8000-000000000001', $1, $2, $2, 'EUR') RETURNING id`,
      [org.organizationId, account],
    );
    const statementId = '01938f5e-5555-7000-8000-000000000002';
    await stack.sql(`INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, currency, transaction_count) VALUES ($1, $2, $3, 'json', 'ready', 'EUR', 1)`, [
      statementId,
      org.organizationId,
      accountId,
    ]);
    await stack.sql(
      `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, bank_account_id, unique_import_id, sequence, amount, currency, booking_date, value_date, bank_reference)
       VALUES ('01938f5e-5555-7000-8000-000000000003', $1, $2, $3, $4, 1, 77.00, 'EUR', '2026-11-05', '2026-11-05', 'LEG-1')`,
      [org.organizationId, statementId, accountId, `${account}:ref:LEG-1`],
    );
    const { rewriteLegacyLineIds } = await import('../services/cash-app/migrations/005_line_ids_and_live_payments.js');
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 1 });
    try {
      expect(await rewriteLegacyLineIds(db)).toBe(1);
    } finally {
      await db.destroy();
    }
    expect(await stack.sql(`SELECT unique_import_id FROM cash_app.bank_transactions WHERE statement_id = $1`, [statementId])).toEqual([{ unique_import_id: `${account}:ref:LEG-1:2026-11-05:77.0000` }]);
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: { account, currency: 'EUR', transactions: ['2026-11-05', '2026-11-06'].map((d) => ({ amount: '77.00', booking_date: d, bank_reference: 'LEG-1' })) },
    });
    const s = await waitFor(org.token, res.body.id, ['ready']);
    expect(s.transactions.map((t: any) => t.booking_date)).toEqual(['2026-11-06']);
  });
});

// ---------------------------------------------------------------------------------------------
// Upload and workflow start: no statement stranded in `uploaded`

describe('upload crash safety', () => {
  it('leaves nothing behind when the upload dies between starting the workflow and committing; the same file uploads again', async () => {
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 2 });
    try {
      const content = Buffer.from(JSON.stringify(jsonStatement('DE44500105175407324931', 3, 'CRASH')));
      let startedId: string | null = null;
      const crash = uploadStatement(
        { db, temporal: temporal.client },
        { organizationId: org.organizationId, uploadedBy: org.userId, format: 'json', fileName: 'crash.json', content, options: {}, ...storedFile(parseStatement('json', content)) },
        {
          beforeCommit: async (id) => {
            startedId = id;
            throw new Error('process killed');
          },
        },
      );
      await expect(crash).rejects.toThrow('process killed');
      expect(startedId).not.toBeNull();
      // No row: the transaction never committed. The workflow it had started finds no statement and ends.
      expect(await stack.sql(`SELECT id FROM cash_app.bank_statements WHERE id = $1`, [startedId])).toEqual([]);
      expect(await temporal.client.workflow.getHandle(bankStatementWorkflowId(startedId!)).result()).toEqual({ status: 'missing' });
      expect(await stack.sql(`SELECT id FROM cash_app.bank_statements WHERE status = 'uploaded' AND organization_id = $1`, [org.organizationId])).toEqual([]);

      // The same file through the gateway: accepted (not a duplicate) and processed.
      const res = await upload(org.token, 'json', 'crash.json', content);
      expect(res.status).toBe(200);
      const s = await waitFor(org.token, res.body.id, ['ready']);
      expect(s.transaction_count).toBe(3);
    } finally {
      await db.destroy();
    }
  }, 90_000);

  it('processes a statement stranded in `uploaded` without a workflow when its file is uploaded again', async () => {
    // The state the previous upload code left when it died after committing the row and before starting the
    // workflow (no endpoint can produce it any more): written directly.
    const content = Buffer.from(JSON.stringify(jsonStatement('DE62370400440532013001', 2, 'STRANDED')));
    const sha = createHash('sha256').update(content).digest('hex');
    const id = '01938f5e-3333-7000-8000-000000000001';
    const [{ id: accountId }] = await stack.sql(
      `INSERT INTO cash_app.bank_accounts (id, organization_id, account_identifier, iban, currency) VALUES ('01938f5e-3333-7000-8000-000000000002', $1, 'DE62370400440532013001', 'DE62370400440532013001', 'EUR') RETURNING id`,
      [org.organizationId],
    );
    await stack.sql(
      `INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, file_name, file_sha256, content, currency, workflow_id)
       VALUES ($1, $2, $3, 'json', 'uploaded', 'stranded.json', $4, $5, 'EUR', $6)`,
      [id, org.organizationId, accountId, sha, content, bankStatementWorkflowId(id)],
    );
    const res = await upload(org.token, 'json', 'stranded.json', content);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(id);
    const s = await waitFor(org.token, id, ['ready']);
    expect(s.transaction_count).toBe(2);
    // Now it is processed: the same file again is a plain duplicate.
    const again = await upload(org.token, 'json', 'stranded.json', content);
    expect(again).toMatchObject({ status: 409, body: { type: 'conflict', detail: expect.stringContaining(id) } });
  });
});

// ---------------------------------------------------------------------------------------------
// One live payment per transaction; statement delete racing a payment approval

describe('payments of a statement', () => {
  const PAYER_IBAN = 'DE02500105170137075030';
  let lockClient: pg.Client;
  beforeAll(async () => {
    lockClient = new pg.Client({ connectionString: stack.databaseUrl });
    await lockClient.connect();
  });
  afterAll(async () => {
    await lockClient?.end();
  });

  /** A ready statement with one deposit and an unapproved payment allocated in full to a fresh invoice. */
  async function statementWithPayment(tag: string, account: string) {
    const number = `INV-${tag}`;
    const pushed = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: number, reference: number, customer_code: 'C-ACME', amount_in_document_currency: 640, amount_in_local_currency: 640 }),
    ]);
    expect(pushed.body.results[0]).toMatchObject({ success: true });
    const [{ id: invoiceId }] = await stack.sql(`SELECT id FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, number]);
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: { account, currency: 'EUR', transactions: [{ amount: '640.00', booking_date: '2026-11-12', counterparty_name: 'Acme GmbH', counterparty_account: PAYER_IBAN, remittance_information: `Invoice ${number}`, bank_reference: `R-${tag}` }] },
    });
    expect(res.status).toBe(200);
    const s = await waitFor(org.token, res.body.id, ['ready']);
    const txId = s.transactions[0].id as string;
    const allocations = [{ invoice_id: invoiceId, amount_paid: '640.00' }];
    let paymentId = s.transactions[0].payments[0]?.id as string | undefined;
    if (paymentId) {
      const patched = await stack.request('PATCH', `/v2/payments/${paymentId}`, { token: org.token, body: { allocations } });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    } else {
      const created = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId, allocations } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      paymentId = created.body.id as string;
    }
    const payment = await stack.request('GET', `/v2/payments/${paymentId}`, { token: org.token });
    expect(payment.body).toMatchObject({ status: 'unapproved', partner_id: expect.any(String) });
    return { statementId: s.id as string, txId, paymentId: paymentId!, partnerId: payment.body.partner_id as string };
  }

  /** Waits until `n` sessions of the test database wait for a lock (bounded: returns how many do). */
  async function lockWaiters(n: number, timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ waiting }] = await stack.sql(`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      if (waiting >= n || Date.now() > deadline) return waiting;
      await sleep(25);
    }
  }

  it('refuses a second live payment for a transaction, in the API and in the database', async () => {
    const { txId, paymentId } = await statementWithPayment('ONE-1', 'DE75512108001245126001');
    const second = await stack.request('POST', '/v2/payments', { token: org.token, body: { bank_transaction_id: txId } });
    expect(second.status).toBe(409);
    // The database itself refuses it (the code path above is not the only guard).
    await expect(
      stack.sql(`INSERT INTO cash_app.payments (id, organization_id, bank_transaction_id, status, amount, currency) VALUES (gen_random_uuid(), $1, $2, 'unapproved', 640, 'EUR')`, [org.organizationId, txId]),
    ).rejects.toMatchObject({ code: '23505', constraint: 'payments_bank_transaction_live_uq' });
    expect(await stack.sql(`SELECT id FROM cash_app.payments WHERE bank_transaction_id = $1`, [txId])).toEqual([{ id: paymentId }]);
  });

  it('never cascade-deletes an approved payment: approval first, delete racing it → 409 and the payment stays approved', async () => {
    const { statementId, paymentId, partnerId } = await statementWithPayment('RACE-A', 'DE75512108001245126002');
    // Hold the approval inside its transaction, after it has marked the payment approved: an uncommitted row
    // with the key the approval inserts when it learns the payer's account makes it wait until we roll back.
    await lockClient.query('BEGIN');
    await lockClient.query(`INSERT INTO cash_app.partner_bank_accounts (id, organization_id, partner_id, account_identifier) VALUES (gen_random_uuid(), $1, $2, $3)`, [
      org.organizationId,
      partnerId,
      PAYER_IBAN,
    ]);
    const approve = stack.request('POST', `/v2/payments/${paymentId}/approve`, { token: org.token });
    expect(await lockWaiters(1)).toBe(1);
    const del = stack.request('DELETE', `/v2/bank-statements/${statementId}`, { token: org.token });
    await lockWaiters(2);
    await lockClient.query('ROLLBACK');
    const [a, d] = await Promise.all([approve, del]);
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(d).toMatchObject({ status: 409, body: { type: 'conflict' } });
    expect((await stack.request('GET', `/v2/payments/${paymentId}`, { token: org.token })).body).toMatchObject({ id: paymentId, status: 'approved' });
    expect((await stack.request('GET', `/v2/bank-statements/${statementId}`, { token: org.token })).status).toBe(200);
  });

  it('never cascade-deletes an approved payment: delete first, approval racing it → the approval finds no payment', async () => {
    const { statementId, txId, paymentId } = await statementWithPayment('RACE-B', 'DE75512108001245126003');
    // Hold the delete inside its transaction, after its checks: a lock on the deposit's row makes the cascade wait.
    await lockClient.query('BEGIN');
    await lockClient.query(`SELECT id FROM cash_app.bank_transactions WHERE id = $1 FOR UPDATE`, [txId]);
    const del = stack.request('DELETE', `/v2/bank-statements/${statementId}`, { token: org.token });
    expect(await lockWaiters(1)).toBe(1);
    const approve = stack.request('POST', `/v2/payments/${paymentId}/approve`, { token: org.token });
    // The approval waits for the delete (the same lock) — or, without that lock, commits while the delete waits.
    await Promise.race([lockWaiters(2), approve]);
    await lockClient.query('ROLLBACK');
    const [d, a] = await Promise.all([del, approve]);
    expect(d.status).toBe(204);
    expect(a).toMatchObject({ status: 404, body: { type: 'entity-not-found' } });
    expect(await stack.sql(`SELECT id FROM cash_app.payments WHERE id = $1`, [paymentId])).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Large inputs: the activities heartbeat inside parsing and context loading (activity level)

describe('heartbeats inside long steps', () => {
  let db: Db;
  beforeAll(async () => {
    db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 3 });
  });
  afterAll(async () => {
    await db?.destroy();
  });

  it('heartbeats while it parses a statement file, before the first line is stored', async () => {
    // A statement row with its file and no workflow (written directly: the worker must not process it).
    const lines = ['Date;Amount;Purpose', ...Array.from({ length: 3000 }, (_, i) => `01.11.2026;${i + 1},00;Invoice ${i}`)].join('\n');
    const id = '01938f5e-4444-7000-8000-000000000001';
    const [{ id: accountId }] = await stack.sql(
      `INSERT INTO cash_app.bank_accounts (id, organization_id, account_identifier, currency) VALUES ('01938f5e-4444-7000-8000-000000000002', $1, 'HB-PARSE-1', 'EUR') RETURNING id`,
      [other.organizationId],
    );
    const mapping = { account: 'HB-PARSE-1', date_column: 'Date', amount_column: 'Amount', currency: 'EUR', remittance_column: 'Purpose', delimiter: ';', decimal_separator: ',', date_format: 'DD.MM.YYYY' };
    await stack.sql(
      `INSERT INTO cash_app.bank_statements (id, organization_id, bank_account_id, format, status, content, options, currency, workflow_id) VALUES ($1, $2, $3, 'csv', 'uploaded', $4, $5, 'EUR', $6)`,
      [id, other.organizationId, accountId, Buffer.from(lines), JSON.stringify({ mapping }), bankStatementWorkflowId(id)],
    );
    const env = new MockActivityEnvironment({ attempt: 1 });
    const beats: any[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const activities = createBankStatementActivities({ db, chunkSize: 1000, chunkPauseMs: 0, heartbeatEveryMs: 0 });
    expect(await env.run(activities.storeStatementTransactions, { organizationId: other.organizationId, statementId: id })).toEqual({ missing: false, total: 3000, stored: 3000 });
    const firstStored = beats.findIndex((b) => b?.next > 0);
    const whileParsing = beats.slice(0, firstStored).filter((b) => b?.parsing > 0);
    // 3,000 lines read in batches of 500, a heartbeat (with the resume point) between batches
    expect(whileParsing.length).toBeGreaterThanOrEqual(5);
    expect(whileParsing.every((b) => b.next === 0)).toBe(true);
    expect(beats.slice(firstStored).map((b) => b.next)).toEqual([1000, 2000, 3000]);
  });

  it('heartbeats while it loads the open invoices of the matching context, page by page', async () => {
    await pushCustomers(stack, other.apiKey, [customerRecord({ customer_code: 'C-HB', name1: 'Heartbeat GmbH' })]);
    const pushed = await pushInvoices(
      stack,
      other.apiKey,
      Array.from({ length: 30 }, (_, i) => invoiceRecord({ document_number: `HB-${7000 + i}`, reference: `HB-${7000 + i}`, customer_code: 'C-HB', amount_in_document_currency: 100 + i, amount_in_local_currency: 100 + i })),
    );
    expect(pushed.status).toBe(200);
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: other.token,
      body: { account: 'HB-MATCH-1', currency: 'EUR', transactions: [1, 2, 3].map((i) => ({ amount: `${i}.11`, booking_date: '2026-11-02', remittance_information: `no invoice here ${i}` })) },
    });
    const s = await waitFor(other.token, res.body.id, ['ready']);
    expect(s.transactions.every((t: any) => t.payments.length === 0)).toBe(true);

    const env = new MockActivityEnvironment({ attempt: 1 });
    const beats: any[] = [];
    env.on('heartbeat', (d: unknown) => beats.push(d));
    const { proposePayments } = createMatchingActivities({
      db,
      config: { MATCH_TOLERANCE_AMOUNT: '5.00', MATCH_TOLERANCE_PERCENT: '0', MATCH_TOLERANCE_ADJUSTMENT: 'short_pay_write_off' },
      heartbeatEveryMs: 0,
      invoicePageSize: 5,
    });
    expect(await env.run(proposePayments, { organizationId: other.organizationId, statementId: s.id })).toEqual({ proposed: 0, unmatched: 3 });
    // 30 open invoices in pages of 5: a heartbeat after each page, before any deposit is matched
    expect(beats.filter((b) => b.done === 0).length).toBeGreaterThanOrEqual(6);
    expect(beats.at(-1)).toEqual({ done: 3, total: 3 });
  });

  it('sees a cancellation (a DELETE) while it loads the matching context, before it proposes anything', async () => {
    // Deposits that pay invoices of the previous test. The worker's run proposed payments for them: those are
    // removed with SQL (no endpoint deletes a proposal) so the activity below has deposits to match.
    const res = await stack.request('POST', '/v2/bank-statements', {
      token: other.token,
      body: { account: 'HB-MATCH-2', currency: 'EUR', transactions: [0, 1].map((i) => ({ amount: `${100 + i}.00`, booking_date: '2026-11-02', remittance_information: `Invoice HB-${7000 + i}` })) },
    });
    const s = await waitFor(other.token, res.body.id, ['ready']);
    await stack.sql(`DELETE FROM cash_app.payments p USING cash_app.bank_transactions t WHERE t.id = p.bank_transaction_id AND t.statement_id = $1`, [s.id]);
    const env = new MockActivityEnvironment({ attempt: 1 });
    env.cancel('CANCELLED');
    const { proposePayments } = createMatchingActivities({
      db,
      config: { MATCH_TOLERANCE_AMOUNT: '5.00', MATCH_TOLERANCE_PERCENT: '0', MATCH_TOLERANCE_ADJUSTMENT: 'short_pay_write_off' },
      heartbeatEveryMs: 0,
      invoicePageSize: 5,
    });
    await expect(env.run(proposePayments, { organizationId: other.organizationId, statementId: s.id })).rejects.toBeInstanceOf(CancelledFailure);
    expect(await stack.sql(`SELECT p.id FROM cash_app.payments p JOIN cash_app.bank_transactions t ON t.id = p.bank_transaction_id WHERE t.statement_id = $1`, [s.id])).toEqual([]);
  });
});
