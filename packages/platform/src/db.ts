import { createRequire } from 'node:module';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';

// NUMERIC and BIGINT stay strings (exact money); DATE stays 'YYYY-MM-DD' (no timezone shifts).
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);

export type Db = Knex;

export interface DbOptions {
  url: string;
  /** Postgres schema owned by the service; becomes the search_path. */
  schema?: string;
  poolMax?: number;
  applicationName?: string;
  /**
   * Longest wait for a pooled connection (ms, default 10000; knex's own default is a minute). A new
   * connection must be made within 5 s. Short on purpose: during a PostgreSQL outage a call fails
   * fast (503 + Retry-After, or a retried activity) instead of hanging. (A refused connection fails
   * at once either way; these bound a server that does not answer and an exhausted pool.)
   */
  acquireTimeoutMs?: number;
  /**
   * Longest a statement may run (ms; unset or 0: no limit). Two deadlines enforce it:
   * - the server's `statement_timeout` (set per connection): a slow statement on a live server is
   *   cancelled there (SQLSTATE 57014) and the connection stays usable;
   * - the client's deadline, `STATEMENT_DEADLINE_GRACE_MS` later, for a server that does not answer
   *   at all (frozen, SIGSTOP, a network partition): the statement fails with a
   *   `DatabaseDeadlineError` and its connection is destroyed at once, never returned to the pool,
   *   so no late answer can ever be read as the answer of a later query (node-postgres's own
   *   `query_timeout` leaves the connection in the pool, which risks exactly that). A
   *   `pg_cancel_backend` from another connection is not sent: it could not reach a frozen server
   *   either, and a live one has cancelled the statement itself by then.
   * Both are transient infrastructure failures (failures.ts): 503 + Retry-After in an API, a
   * retried attempt in an activity. Streams (`.stream()`) are not covered.
   */
  statementTimeoutMs?: number;
}

/** How much later than the server's `statement_timeout` the client gives up on an unanswered statement (ms). */
export const STATEMENT_DEADLINE_GRACE_MS = 2000;

/** A statement got no answer within its deadline; its connection was destroyed (see DbOptions.statementTimeoutMs). */
export class DatabaseDeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`PostgreSQL did not answer within ${deadlineMs} ms; the connection was closed`);
    this.name = 'DatabaseDeadlineError';
  }
}

interface PgConnection {
  __knex__disposed?: unknown;
  connection?: { stream?: { destroy(): void } };
}

type PgDialect = new (config: Knex.Config) => { config: Knex.Config & { statementDeadlineMs?: number }; _query(connection: PgConnection, obj: unknown): Promise<unknown> };
// knex's own PostgreSQL dialect (not in its typings), extended below with the client-side deadline.
const KnexPg = createRequire(import.meta.url)('knex/lib/dialects/postgres/index.js') as PgDialect;

/**
 * knex's PostgreSQL client with a per-statement deadline. A subclass rather than a patched instance:
 * a transaction's client is made from this prototype (knex's makeTxClient), so statements inside
 * transactions get the deadline too.
 */
class DeadlinePgClient extends KnexPg {
  override _query(connection: PgConnection, obj: unknown): Promise<unknown> {
    return withDeadline(connection, this.config.statementDeadlineMs, super._query(connection, obj));
  }
}

/**
 * `run` (a statement on `connection`), given up after `ms`: DatabaseDeadlineError, and the connection
 * is destroyed at once, never returned to the pool, so its late answer reaches no later statement.
 */
function withDeadline<T>(connection: PgConnection, ms: number | undefined, run: Promise<T>): Promise<T> {
  if (!ms) return run;
  return new Promise((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      const err = new DatabaseDeadlineError(ms);
      connection.__knex__disposed = err; // knex's pool destroys it instead of reusing it
      connection.connection?.stream?.destroy(); // pg errors the statement; nothing more is read from this socket
      reject(err);
    }, ms);
    run.then(
      (value) => {
        clearTimeout(timer);
        if (!expired) resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(err);
      },
    );
  });
}

/**
 * Run one statement and hand each row to `onRow` as it arrives (node-postgres `row` events) instead
 * of collecting the whole result first, so that the caller's work on the early rows overlaps the
 * rest of the statement's execution (a grouped aggregation emits its groups while it scans). One
 * ordinary statement, no cursor: the planner keeps its parallel plans. `db` may be a transaction
 * (the statement runs on its connection) and the statement gets the same client-side deadline as
 * every other statement of `db` (DbOptions.statementTimeoutMs). An error thrown by `onRow` fails
 * the call once the statement has ended. Resolves with the number of rows.
 */
export async function streamRows<R>(db: Knex | Knex.Transaction, sql: string, bindings: readonly unknown[], onRow: (row: R) => void): Promise<number> {
  const native = db.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
  const client = db.client as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: PgConnection): Promise<unknown>;
    config: { statementDeadlineMs?: number };
  };
  const connection = await client.acquireConnection();
  try {
    const streamed = new Promise<number>((resolve, reject) => {
      let count = 0;
      let failure: unknown;
      const query = (connection as unknown as pg.Client).query(new pg.Query(native.sql, native.bindings as unknown[]));
      query.on('row', (row: R) => {
        count++;
        if (failure !== undefined) return;
        try {
          onRow(row);
        } catch (err) {
          failure = err;
        }
      });
      query.on('error', reject);
      query.on('end', () => (failure !== undefined ? reject(failure instanceof Error ? failure : new Error('the row consumer failed', { cause: failure })) : resolve(count)));
    });
    return await withDeadline(connection, client.config.statementDeadlineMs, streamed);
  } finally {
    await client.releaseConnection(connection);
  }
}

export function createDb(opts: DbOptions): Db {
  const statementTimeoutMs = opts.statementTimeoutMs && opts.statementTimeoutMs > 0 ? opts.statementTimeoutMs : undefined;
  return knexFactory({
    client: DeadlinePgClient as unknown as typeof Knex.Client,
    connection: {
      connectionString: opts.url,
      application_name: opts.applicationName ?? opts.schema ?? 'rp',
      // a server that does not answer (network partition) fails the connect instead of hanging it
      connectionTimeoutMillis: Math.min(opts.acquireTimeoutMs ?? 5000, 5000),
      // the kernel notices a dead peer of an idle pooled connection
      keepAlive: true,
      ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
    },
    searchPath: opts.schema ? [opts.schema, 'public'] : undefined,
    pool: { min: 0, max: opts.poolMax ?? 10 },
    acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000,
    ...(statementTimeoutMs ? { statementDeadlineMs: statementTimeoutMs + STATEMENT_DEADLINE_GRACE_MS } : {}),
  } as Knex.Config);
}

export interface Migration {
  name: string;
  up: (knex: Knex) => Promise<void>;
  down?: (knex: Knex) => Promise<void>;
}

/**
 * Create the service's schema if needed and run its migrations (ordered by name) in that schema.
 * An API and a worker of the same service may start together: a Postgres advisory lock, held on
 * a connection of its own, lets one of them migrate while the other waits.
 */
export async function migrate(db: Db, schema: string, migrations: Migration[]): Promise<string[]> {
  const sorted = [...migrations].sort((a, b) => a.name.localeCompare(b.name));
  const source: Knex.MigrationSource<Migration> = {
    getMigrations: async () => sorted,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: m.up, down: m.down ?? (async () => {}) }),
  };
  const connection = (db.client as { config: { connection: pg.ClientConfig } }).config.connection;
  const lock = new pg.Client(connection);
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [`rp-migrate:${schema}`]);
    await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
    const [, applied] = (await db.migrate.latest({ migrationSource: source, schemaName: schema, tableName: 'knex_migrations' })) as [number, string[]];
    return applied;
  } finally {
    await lock.end().catch(() => {});
  }
}

/** Standard timestamp columns: created_at / modified_at as timestamptz. */
export function timestamps(t: Knex.CreateTableBuilder, knex: Knex): void {
  t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  t.timestamp('modified_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
}

/** ISO 8601 UTC with Z for a timestamptz value (or null). */
export function isoTime(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
