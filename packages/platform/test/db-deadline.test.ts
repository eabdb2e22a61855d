// The kernel's per-statement deadline (db.ts, DbOptions.statementTimeoutMs) against a real PostgreSQL:
// a live server cancels a slow statement itself (statement_timeout, 57014) and the connection stays
// usable; a server process that does not answer at all (its backend stopped with SIGSTOP, as a frozen
// server or a partition looks to the client) is given up at the client's deadline, the connection is
// destroyed, and its late answer never reaches a later query. Restored with SIGCONT in finally.
import { describe, expect, it } from 'vitest';
import { createDb, DatabaseDeadlineError, isTransientInfraError, STATEMENT_DEADLINE_GRACE_MS } from '@rp/platform';
import { createTestDatabase } from '../../../test/support/stack.js';

const caught = async (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e);

describe('statement deadline', () => {
  it('a live server cancels a slow statement (statement_timeout); the failure is transient and the pool goes on', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 1, statementTimeoutMs: 300 });
    try {
      const err = await caught(db.raw('SELECT pg_sleep(5)'));
      expect((err as { code?: string }).code).toBe('57014');
      expect(isTransientInfraError(err)).toBe(true);
      expect((await db.raw(`SELECT 'next' AS v`)).rows).toEqual([{ v: 'next' }]);
    } finally {
      await db.destroy();
    }
  });

  it('gives up on a frozen server process, destroys the connection, and a later query gets its own answer', async () => {
    const url = await createTestDatabase();
    const db = createDb({ url, poolMax: 1, statementTimeoutMs: 500, applicationName: 'frozen-victim' });
    const observer = createDb({ url, poolMax: 1 });
    let pid = 0;
    try {
      // the one pooled connection, and its server process
      pid = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      process.kill(pid, 'SIGSTOP');
      const err = await caught(db.raw(`SELECT 'late' AS v`));
      expect(err).toBeInstanceOf(DatabaseDeadlineError);
      expect((err as DatabaseDeadlineError).deadlineMs).toBe(500 + STATEMENT_DEADLINE_GRACE_MS);
      expect(isTransientInfraError(err)).toBe(true);
      // inside a transaction too: the transaction fails (its ROLLBACK cannot run on the dead
      // connection either) as a transient failure, nothing unhandled
      const pid2 = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      expect(pid2).not.toBe(pid);
      process.kill(pid2, 'SIGSTOP');
      try {
        const txErr = await caught(db.transaction(async (trx) => void (await trx.raw(`SELECT 'in tx'`))));
        expect(isTransientInfraError(txErr)).toBe(true);
      } finally {
        process.kill(pid2, 'SIGCONT');
      }
      process.kill(pid, 'SIGCONT');
      pid = 0;
      // The server answers 'late' now, to a socket that is closed: the next query is on a new
      // connection and reads its own answer.
      expect((await db.raw(`SELECT 'mine' AS v`)).rows).toEqual([{ v: 'mine' }]);
      expect((await db.raw(`SELECT 'mine too' AS v`)).rows).toEqual([{ v: 'mine too' }]);
      // the frozen server processes ended once they could see their client had gone
      for (;;) {
        const { rows } = await observer.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'frozen-victim'`);
        if (rows[0].n === 1) break; // only the live connection
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      if (pid) process.kill(pid, 'SIGCONT');
      await db.destroy();
      await observer.destroy();
    }
  });

  it('inside a transaction: a statement meeting the frozen server fails at the deadline, the transaction leaves nothing, and the connection is never reused', async () => {
    const url = await createTestDatabase();
    const db = createDb({ url, poolMax: 1, statementTimeoutMs: 500 });
    let frozen = 0;
    try {
      await db.raw('CREATE TABLE ledger (id int PRIMARY KEY, amount numeric(12,2) NOT NULL)');
      const err = await caught(
        db.transaction(async (trx) => {
          await trx.raw('INSERT INTO ledger VALUES (1, 10.00)');
          frozen = (await trx.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
          process.kill(frozen, 'SIGSTOP');
          // the late answer of this statement would be "1 row": it must never reach anyone
          return (await trx.raw('SELECT count(*)::int AS n FROM ledger')).rows;
        }),
      );
      expect(isTransientInfraError(err)).toBe(true);
      process.kill(frozen, 'SIGCONT');
      // the next statements run on a new connection and read their own answers: the frozen
      // transaction never committed (its connection was closed, so the server rolls it back)
      const next = await db.raw(`SELECT pg_backend_pid() AS pid, (SELECT count(*)::int FROM ledger) AS n, 'mine' AS v`);
      expect(next.rows[0]).toMatchObject({ n: 0, v: 'mine' });
      expect(next.rows[0].pid).not.toBe(frozen);
      frozen = 0;
      await db.transaction(async (trx) => void (await trx.raw('INSERT INTO ledger VALUES (1, 12.50)')));
      expect((await db.raw('SELECT id, amount FROM ledger')).rows).toEqual([{ id: 1, amount: '12.50' }]);
    } finally {
      if (frozen) process.kill(frozen, 'SIGCONT');
      await db.destroy();
    }
  });
});
