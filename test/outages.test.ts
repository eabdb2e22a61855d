/**
 * Outages and retries end to end, through the gateway:
 *
 * - a statement that fails in its storing stage reports the lines it holds (`transaction_count`,
 *   `totals`) and an error written for users, and the same file uploaded again resumes it;
 * - a transient database failure (serialization failure, SQLSTATE 40001) more often than the old
 *   5-attempt cap is retried and the statement completes;
 * - with PostgreSQL or Temporal unreachable, calls answer 503 `service-unavailable` with Retry-After
 *   (v2 and v1 shapes), an upload or receipt request that could not start its workflow leaves nothing
 *   that blocks its retry, and the same calls succeed after recovery.
 *
 * SQL set-up is used only for injected faults and for states no endpoint produces: triggers on
 * cash_app.bank_transactions that fail inserts (no API client can make the database fail), and an
 * approved payment for the receipt (as in payment-receipt.test.ts). Outages: the cash-app API is
 * restarted on its own port behind TCP proxies to the real PostgreSQL and Temporal
 * (test/support/outage.ts); stopping a proxy refuses new connections and cuts open ones, which is
 * what a restarting dependency looks like to that API. The worker keeps its direct connections.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceApi, type CommonConfig, type ServiceModule } from '@rp/platform';
import { STATEMENT_PROCESSING_FAILED } from '@rp/workflows';
import { RECEIPT_NOT_STARTED } from '../services/cash-app/src/domain/outreach.js';
import { SERVICE_MODULES } from '../scripts/local/services.js';
import { customerRecord, pushCustomers } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { tcpProxy, type TcpOutage } from './support/outage.js';
import { startStack, waitForMail, type HttpResult, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let pgOutage: TcpOutage;
let temporalOutage: TcpOutage;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function jsonStatement(account: string, n: number, prefix: string) {
  return {
    account,
    currency: 'EUR',
    transactions: Array.from({ length: n }, (_, i) => ({
      amount: `${100 + i}.25`,
      booking_date: '2026-11-12',
      counterparty_name: `Payer ${i}`,
      remittance_information: `INV-${prefix}-${i}`,
      bank_reference: `${prefix}-${i}`,
    })),
  };
}

const uploadJson = (body: unknown) => stack.request('POST', '/v2/bank-statements', { token: org.token, body });

/** A client honouring Retry-After: repeats the call while it answers 503 (bounded), returns the first other answer. */
async function whileUnavailable(call: () => Promise<HttpResult>, tries = 40): Promise<HttpResult> {
  for (let i = 0; ; i++) {
    const res = await call();
    if (res.status !== 503 || i >= tries) return res;
    await sleep(1000);
  }
}

function expectOutage503(res: HttpResult, shape: 'v1' | 'v2' = 'v2') {
  expect(res.status).toBe(503);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  if (shape === 'v2') {
    expect(res.body).toMatchObject({ type: 'service-unavailable', status: 503, title: 'Service unavailable', detail: expect.any(String) });
  } else {
    expect(res.body).toMatchObject({ data: {}, error: 'service-unavailable', message: expect.any(String) });
  }
  // nothing internal in what the client sees
  expect(res.text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|UNAVAILABLE|DEADLINE/);
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: { BANK_STATEMENT_CHUNK_SIZE: '2', BANK_STATEMENT_CHUNK_PAUSE_MS: '50' } });
  org = await stack.onboard('Outage Org');
  // The cash-app API again, on its port, reaching PostgreSQL and Temporal through proxies the tests stop.
  const pgUrl = new URL(stack.env.DATABASE_URL);
  pgOutage = await tcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port) });
  const [temporalHost, temporalPort] = stack.env.TEMPORAL_ADDRESS.split(':');
  temporalOutage = await tcpProxy({ host: temporalHost!, port: Number(temporalPort) });
  const proxiedDb = new URL(pgUrl);
  proxiedDb.hostname = '127.0.0.1';
  proxiedDb.port = String(pgOutage.port);
  const port = stack.apis['cash-app'].port;
  await stack.apis['cash-app'].close();
  const entry = SERVICE_MODULES['cash-app'];
  stack.apis['cash-app'] = await startServiceApi(
    entry.module as ServiceModule<CommonConfig, unknown>,
    entry.config({ ...stack.env, DATABASE_URL: proxiedDb.toString(), TEMPORAL_ADDRESS: `127.0.0.1:${temporalOutage.port}` }),
    { port },
  );
}, 120_000);
afterAll(async () => {
  await pgOutage?.start().catch(() => {});
  await temporalOutage?.start().catch(() => {});
  await stack?.close();
  await pgOutage?.close();
  await temporalOutage?.close();
});

describe('statement processing under failures', () => {
  it('reports the stored lines and a user-worded error when storing fails half-way; the same file again resumes it', async () => {
    // Every insert after the 4th line fails with an unexpected error whose text names an internal address.
    await stack.sql(`CREATE FUNCTION cash_app.fail_half() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected: connect ECONNREFUSED 127.0.0.1:5433'; END $$`);
    await stack.sql(
      `CREATE TRIGGER fail_half BEFORE INSERT ON cash_app.bank_transactions FOR EACH ROW WHEN (NEW.bank_reference LIKE 'HALF-%' AND NEW.sequence > 4) EXECUTE FUNCTION cash_app.fail_half()`,
    );
    const file = jsonStatement('DE02120300000000202051', 10, 'HALF');
    const res = await uploadJson(file);
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    const failed = await waitForStatement(stack, org.token, id, { statuses: ['failed', 'ready'], timeoutMs: 90_000 });
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(STATEMENT_PROCESSING_FAILED);
    expect(failed.error).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);

    const [{ n: stored }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_transactions WHERE statement_id = $1`, [id]);
    expect(stored).toBe(4);
    expect(failed.transaction_count).toBe(stored);
    expect(failed.transactions).toHaveLength(stored);
    expect(failed.totals).toEqual([{ currency: 'EUR', credit_count: 4, credit_total: '407.00', debit_count: 0, debit_total: '0.00' }]);

    // Fault gone: the same file uploaded again resumes the statement (its error says so) instead of 409.
    await stack.sql(`DROP TRIGGER fail_half ON cash_app.bank_transactions`);
    const again = await uploadJson(file);
    expect(again.status).toBeLessThan(300);
    expect(again.body.id).toBe(id);
    const ready = await waitForStatement(stack, org.token, id, { timeoutMs: 60_000 });
    expect(ready).toMatchObject({ status: 'ready', error: null, transaction_count: 10 });
    const [{ n, distinct }] = await stack.sql(
      `SELECT count(*)::int AS n, count(DISTINCT unique_import_id)::int AS distinct FROM cash_app.bank_transactions WHERE statement_id = $1`,
      [id],
    );
    expect({ n, distinct }).toEqual({ n: 10, distinct: 10 });
  }, 180_000);

  it('retries a transient database failure more often than the old 5-attempt cap, and the statement completes', async () => {
    // The first 5 inserts of these lines fail with a serialization failure (SQLSTATE 40001).
    await stack.sql(`CREATE SEQUENCE cash_app.serx_seq`);
    await stack.sql(`CREATE FUNCTION cash_app.serx() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('cash_app.serx_seq') <= 5 THEN RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END IF;
        RETURN NEW;
      END $$`);
    await stack.sql(`CREATE TRIGGER serx BEFORE INSERT ON cash_app.bank_transactions FOR EACH ROW WHEN (NEW.bank_reference LIKE 'SERX-%') EXECUTE FUNCTION cash_app.serx()`);
    try {
      const res = await uploadJson(jsonStatement('DE89370400440532013000', 6, 'SERX'));
      expect(res.status).toBe(200);
      const ready = await waitForStatement(stack, org.token, res.body.id, { timeoutMs: 120_000 });
      expect(ready).toMatchObject({ status: 'ready', error: null, transaction_count: 6 });
      const [{ n }] = await stack.sql(`SELECT last_value::int AS n FROM cash_app.serx_seq`);
      expect(n).toBeGreaterThan(5); // the five failures happened, then the lines went in
    } finally {
      await stack.sql(`DROP TRIGGER IF EXISTS serx ON cash_app.bank_transactions`);
    }
  }, 180_000);
});

describe('what a client sees during an outage', () => {
  it('answers 503 with Retry-After while PostgreSQL is unreachable (v2 and v1 shapes), and the same calls succeed after it returns', async () => {
    expect((await stack.request('GET', '/v2/bank-statements', { token: org.token })).status).toBe(200);
    const before = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]);
    await pgOutage.stop();
    try {
      expectOutage503(await stack.request('GET', '/v2/bank-statements', { token: org.token }));
      expectOutage503(await stack.request('GET', '/v1/remittances', { token: org.token }), 'v1');
      expectOutage503(await uploadJson(jsonStatement('DE44500105175407324931', 3, 'PGDOWN')));
    } finally {
      await pgOutage.start();
    }
    const list = await whileUnavailable(() => stack.request('GET', '/v2/bank-statements', { token: org.token }));
    expect(list.status).toBe(200);
    expect((await whileUnavailable(() => stack.request('GET', '/v1/remittances', { token: org.token }))).status).toBe(200);
    const after = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]);
    expect(after).toEqual(before);
    const upload = await whileUnavailable(() => uploadJson(jsonStatement('DE44500105175407324931', 3, 'PGDOWN')));
    expect(upload.status).toBe(200);
    expect((await waitForStatement(stack, org.token, upload.body.id, { timeoutMs: 60_000 })).transaction_count).toBe(3);
  }, 180_000);

  it('answers an upload 503 with Retry-After within seconds while Temporal is unreachable, stores nothing, and the same upload succeeds after', async () => {
    const file = jsonStatement('DE75512108001245126199', 3, 'TMPDOWN');
    const count = async () =>
      (await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]))[0].n as number;
    const before = await count();
    await temporalOutage.stop();
    try {
      expectOutage503(await uploadJson(file));
      expect(await count()).toBe(before);
    } finally {
      await temporalOutage.start();
    }
    const res = await whileUnavailable(() => uploadJson(file));
    expect(res.status).toBe(200);
    expect(await count()).toBe(before + 1);
    expect(await waitForStatement(stack, org.token, res.body.id, { timeoutMs: 60_000 })).toMatchObject({ status: 'ready', transaction_count: 3 });
  }, 180_000);

  it('answers a receipt request 503 while Temporal is unreachable; the record left says so in words for users and the same request later sends the receipt', async () => {
    const email = `ap.outage.${randomBytes(4).toString('hex')}@acme.example`;
    const code = `C-${randomBytes(3).toString('hex')}`;
    const c = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: 'Outage Kunde GmbH', smtp_addr: email })]);
    const partnerId = c.body.results[0].service_id!;
    // An approved payment of that customer (SQL: the state statement processing and approval produce).
    const [st] = await stack.sql(`INSERT INTO cash_app.bank_statements (id, organization_id, format, status) VALUES (gen_random_uuid(), $1, 'json', 'ready') RETURNING id`, [org.organizationId]);
    const [tx] = await stack.sql(
      `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, unique_import_id, sequence, amount, currency, booking_date, value_date)
       VALUES (gen_random_uuid(), $1, $2, gen_random_uuid()::text, 1, 75, 'EUR', '2026-11-12', '2026-11-12') RETURNING id`,
      [org.organizationId, st.id],
    );
    const [pay] = await stack.sql(
      `INSERT INTO cash_app.payments (id, organization_id, bank_transaction_id, partner_id, amount, currency, payment_date, status, approved_at)
       VALUES (gen_random_uuid(), $1, $2, $3, 75, 'EUR', '2026-11-12', 'approved', now()) RETURNING id`,
      [org.organizationId, tx.id, partnerId],
    );
    const request = () => stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: org.token, body: { payment_id: pay.id } });

    await temporalOutage.stop();
    try {
      expectOutage503(await request());
    } finally {
      await temporalOutage.start();
    }
    const res = await whileUnavailable(request);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('pending');
    expect(await waitForMail(email)).toHaveLength(1);
    const list = await stack.request('GET', `/v2/cash-app/outreach?payment_id=${pay.id}`, { token: org.token });
    const failed = list.body.data.filter((r: any) => r.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toBe(RECEIPT_NOT_STARTED);
  }, 180_000);
});
