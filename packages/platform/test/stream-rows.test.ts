// streamRows (db.ts): one statement whose rows reach the caller as they arrive, against a real
// PostgreSQL. Predicted overdue assembles each customer while the aggregation goes on with the next
// ones; it relies on what is asserted here: every row, in the statement's order, with the same type
// parsing as any other statement; the transaction's own snapshot when given a transaction; the
// deadline of every statement for a server that does not answer; a failing consumer failing the
// call without breaking the connection.
import { describe, expect, it } from 'vitest';
import { createDb, DatabaseDeadlineError, streamRows } from '@rp/platform';
import { createTestDatabase } from '../../../test/support/stack.js';

const caught = async (p: Promise<unknown>) => p.then(() => { throw new Error('expected a failure'); }, (e: unknown) => e);

describe('streamRows', () => {
  it('hands every row over in order, with the kernel type parsing (bigint and numeric as strings), knex bindings', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 1 });
    try {
      const seen: { i: number; big: string; amount: string; day: string }[] = [];
      const n = await streamRows<(typeof seen)[number]>(
        db,
        `SELECT i, (i::bigint * 10000000000) AS big, (i * 1.05)::numeric(20, 2) AS amount, (DATE '2026-01-01' + i) AS day FROM generate_series(1, ?::int) i WHERE i > ?`,
        [5000, 0],
        (row) => seen.push(row),
      );
      expect(n).toBe(5000);
      expect(seen.length).toBe(5000);
      expect(seen.map((r) => r.i)).toEqual(Array.from({ length: 5000 }, (_, k) => k + 1));
      expect(seen[2]).toEqual({ i: 3, big: '30000000000', amount: '3.15', day: '2026-01-04' });
    } finally {
      await db.destroy();
    }
  });

  it('the first rows arrive while the statement is still running', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 1 });
    try {
      const started = Date.now();
      const at: number[] = [];
      // a row larger than the server's output buffer (8 kB: it sends once that is full, or at the end),
      // then half a second of work on the server, then another row
      await streamRows(db, `SELECT i, repeat('x', 20000) AS pad, CASE WHEN i = 2 THEN pg_sleep(0.5) END FROM generate_series(1, 2) i`, [], () => at.push(Date.now() - started));
      expect(at.length).toBe(2);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(400);
    } finally {
      await db.destroy();
    }
  });

  it('inside a transaction it runs on the transaction’s connection and sees its uncommitted rows', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 2 });
    try {
      await db.raw('CREATE TABLE t (v int)');
      const seen: number[] = [];
      await db.transaction(async (trx) => {
        await trx.raw('INSERT INTO t VALUES (1), (2)');
        await streamRows<{ v: number }>(trx, 'SELECT v FROM t ORDER BY v', [], (r) => seen.push(r.v));
      });
      expect(seen).toEqual([1, 2]);
    } finally {
      await db.destroy();
    }
  });

  it('a consumer that throws fails the call after the statement ended; the connection goes on', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 1 });
    try {
      let calls = 0;
      const err = await caught(
        streamRows<{ i: number }>(db, 'SELECT i FROM generate_series(1, 100) i', [], (r) => {
          calls++;
          if (r.i === 10) throw new Error('consumer broke');
        }),
      );
      expect((err as Error).message).toBe('consumer broke');
      expect(calls).toBe(10);
      expect((await db.raw(`SELECT 'next' AS v`)).rows).toEqual([{ v: 'next' }]);
    } finally {
      await db.destroy();
    }
  });

  it('a statement error rejects with the server’s error', async () => {
    const db = createDb({ url: await createTestDatabase(), poolMax: 1 });
    try {
      const err = await caught(streamRows(db, 'SELECT 1 / (i - 3) FROM generate_series(1, 5) i', [], () => {}));
      expect((err as { code?: string }).code).toBe('22012');
      expect((await db.raw(`SELECT 'next' AS v`)).rows).toEqual([{ v: 'next' }]);
    } finally {
      await db.destroy();
    }
  });

  it('gets the client deadline of every statement on a server process that does not answer', async () => {
    const url = await createTestDatabase();
    const db = createDb({ url, poolMax: 1, statementTimeoutMs: 300 });
    let pid = 0;
    try {
      pid = (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      process.kill(pid, 'SIGSTOP');
      const err = await caught(streamRows(db, `SELECT 'late' AS v`, [], () => {}));
      expect(err).toBeInstanceOf(DatabaseDeadlineError);
      process.kill(pid, 'SIGCONT');
      pid = 0;
      const seen: string[] = [];
      await streamRows<{ v: string }>(db, `SELECT 'mine' AS v`, [], (r) => seen.push(r.v));
      expect(seen).toEqual(['mine']);
    } finally {
      if (pid) process.kill(pid, 'SIGCONT');
      await db.destroy();
    }
  });
});
