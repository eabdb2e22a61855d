import type { Knex } from 'knex';

export const name = '006_remote_document_identity';

/**
 * Synced documents are identified by the source system's own stable id, not by their number.
 *
 * A pull sync (origin `connection:<id>`) keys its documents by (organization_id, origin, kind,
 * remote_id): QuickBooks' entity `Id` survives edits of DocNumber and TxnDate, which the natural key
 * (company_code, fiscal_year = TxnDate year, document_number) does not. The natural key stays the
 * upsert key (and unique) for every other document: the middleware push and any synced row without
 * a remote id. A synced document is exempt from it, because the source may reuse a number (QuickBooks
 * allows duplicate DocNumbers, and two edits can swap numbers between two invoices).
 *
 * `remote_deleted_at`: when the source reported the document deleted (QuickBooks CDC status
 * `Deleted`, or a full read no longer returned it). The row stays (its id may be referenced by
 * payments and allocations) with amount_open 0 and status_open false, so it is no longer open AR.
 * A later read that returns the document again clears it.
 *
 * Existing rows: synced documents already carry their remote id. Where the old key turned an
 * edit into a second row with the same remote id, the most recently written row (the latest state
 * of the source record) keeps the remote id; the older copies are closed (amount_open 0,
 * status_open false, remote_deleted_at set) and lose their remote id. And because the old sync never
 * received deletions, the QuickBooks invoice and credit memo cursors are reset: the next sync is a
 * full read, which closes what QuickBooks no longer has.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE documents ADD COLUMN remote_deleted_at timestamptz;

    WITH ranked AS (
      SELECT id, row_number() OVER (PARTITION BY organization_id, origin, kind, remote_id ORDER BY modified_at DESC, id DESC) AS rn
        FROM documents
       WHERE remote_id IS NOT NULL AND origin LIKE 'connection:%'
    )
    UPDATE documents AS d
       SET remote_id = NULL, amount_open = 0, status_open = false, remote_deleted_at = now(), modified_at = now()
      FROM ranked
     WHERE d.id = ranked.id AND ranked.rn > 1;

    ALTER TABLE documents DROP CONSTRAINT documents_natural_key_uq;
    CREATE UNIQUE INDEX documents_natural_key_uq ON documents (organization_id, company_code, fiscal_year, document_number)
      WHERE remote_id IS NULL OR origin NOT LIKE 'connection:%';
    CREATE UNIQUE INDEX documents_remote_key_uq ON documents (organization_id, origin, kind, remote_id)
      WHERE remote_id IS NOT NULL AND origin LIKE 'connection:%';

    UPDATE connection_models AS m
       SET sync_cursor = NULL, modified_at = now()
      FROM connections AS c
     WHERE c.id = m.connection_id AND c.provider_name = 'quickbooks_online' AND m.name IN ('invoices', 'credit_memos');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX IF EXISTS documents_remote_key_uq;
    DROP INDEX IF EXISTS documents_natural_key_uq;
    ALTER TABLE documents ADD CONSTRAINT documents_natural_key_uq UNIQUE (organization_id, company_code, fiscal_year, document_number);
    ALTER TABLE documents DROP COLUMN IF EXISTS remote_deleted_at;
  `);
}
