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
}

export function createDb(opts: DbOptions): Db {
  return knexFactory({
    client: 'pg',
    connection: {
      connectionString: opts.url,
      application_name: opts.applicationName ?? opts.schema ?? 'rp',
      // a server that does not answer (network partition) fails the connect instead of hanging it
      connectionTimeoutMillis: Math.min(opts.acquireTimeoutMs ?? 5000, 5000),
    },
    searchPath: opts.schema ? [opts.schema, 'public'] : undefined,
    pool: { min: 0, max: opts.poolMax ?? 10 },
    acquireConnectionTimeout: opts.acquireTimeoutMs ?? 10_000,
  });
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
