/**
 * PostgreSQL frozen, through the gateway: a request whose pooled
 * connection reaches a server process that no longer answers gets 503 `service-unavailable` with
 * Retry-After at the statement deadline (here DATABASE_STATEMENT_TIMEOUT_MS=1000: given up at 3 s)
 * instead of hanging for the whole outage; a write (a transaction) that met it left nothing behind,
 * and the same calls succeed — with their own answers, never the late answer of a frozen
 * statement — once the server answers again. (The kernel's side, statement by statement and
 * inside a transaction: packages/platform/test/db-deadline.test.ts.)
 *
 * The freeze is real: the cash-app API's PostgreSQL server processes (its pooled connections,
 * found in pg_stat_activity by application name) are stopped with SIGSTOP, as a frozen server
 * looks to that API; SIGCONT in finally. Nothing else of the run's PostgreSQL is stopped.
 * SQL reads only: the server process ids and the count of stored statements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type HttpResult, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack({ env: { DATABASE_STATEMENT_TIMEOUT_MS: '1000' } });
  org = await stack.onboard('Frozen Org');
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

/** Stops every server process of the cash-app API's pooled connections; returns a function that resumes them. */
async function freezeCashAppConnections(): Promise<() => void> {
  const rows = await stack.sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'cash-app-api'`);
  expect(rows.length).toBeGreaterThan(0);
  for (const { pid } of rows) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const { pid } of rows) process.kill(pid, 'SIGCONT');
  };
}

function expectOutage503(res: HttpResult, shape: 'v1' | 'v2' = 'v2') {
  expect(res.status, res.text).toBe(503);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  if (shape === 'v2') expect(res.body).toMatchObject({ type: 'service-unavailable', status: 503, title: 'Service unavailable' });
  else expect(res.body).toMatchObject({ data: {}, error: 'service-unavailable', message: expect.any(String) });
  expect(res.text).not.toMatch(/127\.0\.0\.1|PostgreSQL did not answer|SELECT|ECONN/);
}

const statement = (ref: string) => ({
  account: 'DE89370400440532013000',
  currency: 'EUR',
  transactions: [{ amount: '12.50', booking_date: '2026-11-12', counterparty_name: 'Payer', remittance_information: `INV-${ref}`, bank_reference: ref }],
});

describe('PostgreSQL frozen', () => {
  it('answers 503 with Retry-After at the statement deadline instead of hanging (v2 and v1), and the calls succeed once it answers again', async () => {
    // a pooled connection of the cash-app API (pool minimum 0: it stays for the idle timeout)
    expect((await stack.request('GET', '/v2/bank-statements', { token: org.token })).status).toBe(200);
    const resume = await freezeCashAppConnections();
    try {
      expectOutage503(await stack.request('GET', '/v2/bank-statements', { token: org.token }));
    } finally {
      resume();
    }
    expect((await stack.request('GET', '/v2/bank-statements', { token: org.token })).status).toBe(200);

    await stack.request('GET', '/v1/remittances', { token: org.token });
    const resumeV1 = await freezeCashAppConnections();
    try {
      expectOutage503(await stack.request('GET', '/v1/remittances', { token: org.token }), 'v1');
    } finally {
      resumeV1();
    }
    expect((await stack.request('GET', '/v1/remittances', { token: org.token })).status).toBe(200);
  });

  it('a write that meets the frozen server answers 503 and leaves nothing; the same write succeeds after', async () => {
    const count = async () =>
      (await stack.sql(`SELECT count(*)::int AS n FROM cash_app.bank_statements WHERE organization_id = $1`, [org.organizationId]))[0].n as number;
    expect((await stack.request('GET', '/v2/bank-statements', { token: org.token })).status).toBe(200);
    const before = await count();
    const resume = await freezeCashAppConnections();
    try {
      expectOutage503(await stack.request('POST', '/v2/bank-statements', { token: org.token, body: statement('FROZEN-1') }));
    } finally {
      resume();
    }
    expect(await count()).toBe(before);
    const again = await stack.request('POST', '/v2/bank-statements', { token: org.token, body: statement('FROZEN-1') });
    expect(again.status, again.text).toBe(200);
    expect(await count()).toBe(before + 1);
    // the reads after the outage answer with what is stored, the new statement included
    const listed = await stack.request('GET', '/v2/bank-statements', { token: org.token });
    expect(listed.body.total_records).toBe(before + 1);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toContain(again.body.id);
  });
});
