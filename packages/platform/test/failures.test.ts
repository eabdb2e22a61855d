// The kernel's outage classification against real failures of real components: a refused
// PostgreSQL connection, a backend terminated by the server (57P01), a serialization failure raised
// by the server (40001), the pool's acquire timeout, Temporal unreachable — and what is not an outage.
import net from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/client';
import { Connection } from '@temporalio/client';
import { capExternalFailure, createDb, isTransientInfraError, toActivityFailure, TRANSIENT_INFRA_FAILURE, UNEXPECTED_ERROR_ATTEMPTS } from '@rp/platform';
import { createTestDatabase } from '../../../test/support/stack.js';

async function closedPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

const caught = async (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e);

describe('isTransientInfraError', () => {
  it('recognizes PostgreSQL outages and retryable server errors', async () => {
    const url = await createTestDatabase();
    const down = new URL(url);
    down.port = String(await closedPort());
    const refused = createDb({ url: down.toString(), poolMax: 1 });
    const db = createDb({ url, poolMax: 2 });
    const busy = createDb({ url, poolMax: 1, acquireTimeoutMs: 300 });
    try {
      expect(isTransientInfraError(await caught(refused.raw('select 1')))).toBe(true); // ECONNREFUSED

      const serialization = await caught(db.raw(`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$`));
      expect((serialization as { code?: string }).code).toBe('40001');
      expect(isTransientInfraError(serialization)).toBe(true);

      // The server ends the session (as a restart does): 57P01 admin_shutdown. A plain pg client, not a
      // knex transaction: knex's ROLLBACK on the dead connection rejects a second time, unhandled.
      const victimClient = new pg.Client({ connectionString: url, application_name: 'victim' });
      victimClient.on('error', () => {}); // the connection's own 'error' event after the termination
      await victimClient.connect();
      const victim = caught(victimClient.query('SELECT pg_sleep(10)')); // handled from the start
      // terminate it once it is there (polled: ordering, not timing)
      while (!(await db.raw(`SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE application_name = 'victim'`)).rows.length) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const terminated = await victim;
      expect((terminated as { code?: string }).code).toBe('57P01');
      expect(isTransientInfraError(terminated)).toBe(true);
      await victimClient.end().catch(() => {});

      // Pool exhausted: knex's acquire timeout
      const holder = busy.transaction(async (trx) => void (await trx.raw('SELECT pg_sleep(2)')));
      const pool = (busy.client as { pool: { numUsed(): number } }).pool;
      while (pool.numUsed() < 1) await new Promise((r) => setTimeout(r, 20)); // the one connection is taken
      expect(isTransientInfraError(await caught(busy.raw('select 1')))).toBe(true);
      await holder;

      // Not outages: a constraint violation, a syntax error, a plain error
      expect(isTransientInfraError(await caught(db.raw(`DO $$ BEGIN RAISE EXCEPTION 'dup' USING ERRCODE = '23505'; END $$`)))).toBe(false);
      expect(isTransientInfraError(await caught(db.raw('SELEC 1')))).toBe(false);
      expect(isTransientInfraError(new Error('connect ECONNREFUSED 127.0.0.1:5433 (only the text)'))).toBe(false);
    } finally {
      await Promise.all([refused.destroy(), db.destroy(), busy.destroy()]);
    }
  }, 60_000);

  it('recognizes Temporal unreachable', async () => {
    const err = await caught(Connection.connect({ address: `127.0.0.1:${await closedPort()}`, connectTimeout: 1000 }));
    expect(isTransientInfraError(err)).toBe(true);
  });
});

describe('activity failures', () => {
  it('makes outages retryable TransientInfraErrors, caps unexpected errors, and leaves declared failures alone', () => {
    const outage = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });
    const asOutage = toActivityFailure(outage, 99) as ApplicationFailure;
    expect(asOutage).toBeInstanceOf(ApplicationFailure);
    expect({ type: asOutage.type, nonRetryable: asOutage.nonRetryable }).toEqual({ type: TRANSIENT_INFRA_FAILURE, nonRetryable: false });

    const bug = new TypeError('x is undefined');
    expect(toActivityFailure(bug, 1)).toBe(bug);
    expect(toActivityFailure(bug, UNEXPECTED_ERROR_ATTEMPTS)).toMatchObject({ type: 'UnexpectedError', nonRetryable: true });

    const business = ApplicationFailure.nonRetryable('bad file', 'StatementParseError');
    expect(toActivityFailure(business, 1)).toBe(business);
  });

  it('ends an external system failure at its attempt cap, never an outage', () => {
    const smtp = ApplicationFailure.create({ type: 'SmtpUnavailable', message: 'The email server could not be reached.' });
    expect(capExternalFailure(smtp, 1, 3)).toBe(smtp);
    expect(capExternalFailure(smtp, 3, 3)).toMatchObject({ type: 'SmtpUnavailable', nonRetryable: true, message: smtp.message });
    const outage = ApplicationFailure.create({ type: TRANSIENT_INFRA_FAILURE, message: 'db down' });
    expect(capExternalFailure(outage, 50, 3)).toBe(outage);
    const pgError = Object.assign(new Error('terminating connection'), { code: '57P01' });
    expect(capExternalFailure(pgError, 50, 3)).toBe(pgError);
  });
});
