/**
 * What the ledger's SQL modules share: running a named (prepared) statement on the connection knex
 * would use, and the partial-index predicates that tell the two document keys apart.
 */
import type { Knex } from 'knex';

export type Db = Knex | Knex.Transaction;

/** Pull syncs write under an origin of this form; their documents are keyed by the source's id. */
export const SYNC_ORIGIN_PREFIX = 'connection:';
/** The partial-index predicates of integrations migration 006 (repeated verbatim for ON CONFLICT inference). */
export const NATURAL_KEY_PREDICATE = `remote_id IS NULL OR origin NOT LIKE 'connection:%'`;
export const REMOTE_KEY_PREDICATE = `remote_id IS NOT NULL AND origin LIKE 'connection:%'`;

interface PgConnection {
  query<R>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

/**
 * Run a named (prepared) statement on the connection knex would use: the transaction's own when
 * `db` is a transaction, else one from the pool. Postgres parses and plans a named statement once
 * per connection instead of once per batch, and there is no client-side binding rewrite.
 */
export async function query<R>(db: Db, name: string, text: string, values: unknown[]): Promise<R[]> {
  const client = db.client as { acquireConnection(): Promise<PgConnection>; releaseConnection(c: PgConnection): Promise<unknown> };
  const connection = await client.acquireConnection();
  try {
    return (await connection.query<R>({ name, text, values })).rows;
  } finally {
    await client.releaseConnection(connection);
  }
}

