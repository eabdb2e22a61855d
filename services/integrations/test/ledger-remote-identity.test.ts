/**
 * Integrations migration 006 and the remote-keyed ledger writes, on real Postgres: rows the old
 * sync keyed by (company_code, fiscal_year, document_number) are migrated, synced documents are
 * then written by their QuickBooks Id, and the middleware push keeps its natural key. The
 * pre-006 rows are inserted with SQL: no endpoint of today's code can produce them.
 */
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { createDb, migrate, newId, type Db } from '@rp/platform';
import { integrationsMigrations } from '@rp/integrations';
import { closeDocumentsNotSeenSince, markRemoteDocumentsDeleted, upsertDocuments, upsertRemoteDocuments, type DocumentUpsert } from '../src/store/ledger.js';
import { createTestDatabase } from '../../../test/support/stack.js';

let db: Db;
const org = newId();
const connectionId = newId();
const origin = `connection:${connectionId}`;

function doc(over: Partial<DocumentUpsert> & { remote_id: string; document_number: string }): DocumentUpsert {
  return { kind: 'invoice', company_code: 'realm', fiscal_year: '2026', currency: 'USD', amount_in_document_currency: '100', amount_open: '100', status_open: true, ...over };
}

beforeAll(async () => {
  db = createDb({ url: await createTestDatabase(), schema: 'integrations', poolMax: 3 });
  await migrate(
    db,
    'integrations',
    integrationsMigrations.filter((m) => m.name < '006'),
  );
  // What the old sync left: an edit of invoice 77's number and date made a second open document.
  await db('connections').insert({ id: connectionId, organization_id: org, provider_name: 'quickbooks_online', name: 'qbo', is_authentication_pending: false });
  await db('connection_models').insert(
    ['customers', 'invoices', 'credit_memos'].map((name) => ({ id: newId(), organization_id: org, connection_id: connectionId, name, display_name: name, sync_cursor: new Date() })),
  );
  const base = { organization_id: org, origin, kind: 'invoice', company_code: 'realm', currency: 'USD', amount_in_document_currency: '100', amount_open: '100', status_open: true };
  await db('documents').insert([
    { ...base, id: newId(), remote_id: '77', fiscal_year: '2025', document_number: 'INV-77', modified_at: new Date(Date.now() - 3_600_000) },
    { ...base, id: newId(), remote_id: '77', fiscal_year: '2026', document_number: 'INV-77-R', modified_at: new Date() },
    { ...base, id: newId(), remote_id: '78', fiscal_year: '2026', document_number: 'INV-78' },
    { ...base, id: newId(), origin: 'middleware', remote_id: '77', fiscal_year: '2026', document_number: 'SAP-77' },
  ]);
  await migrate(db, 'integrations', integrationsMigrations);
});

afterAll(async () => {
  await db?.destroy();
});

const rows = (where: Record<string, unknown>) =>
  db('documents').where({ organization_id: org, ...where }).select('id', 'origin', 'remote_id', 'document_number', 'fiscal_year', 'amount_open', 'status_open', 'remote_deleted_at').orderBy('document_number');

describe('migration 006', () => {
  it('keeps the latest copy of a synced document under its remote id and closes the stale copies', async () => {
    const synced = await rows({ origin });
    expect(synced.map((d) => [d.document_number, d.remote_id, d.amount_open, d.status_open, d.remote_deleted_at !== null])).toEqual([
      ['INV-77', null, '0.0000', false, true],
      ['INV-77-R', '77', '100.0000', true, false],
      ['INV-78', '78', '100.0000', true, false],
    ]);
    const [pushed] = await rows({ origin: 'middleware' });
    expect(pushed).toMatchObject({ remote_id: '77', document_number: 'SAP-77', status_open: true, remote_deleted_at: null });
  });

  it('resets the QuickBooks invoice and credit memo cursors: the next sync reads in full (and closes what was deleted)', async () => {
    const cursors = await db('connection_models').where({ connection_id: connectionId }).select('name', 'sync_cursor').orderBy('name');
    expect(cursors.map((c) => [c.name, c.sync_cursor === null])).toEqual([
      ['credit_memos', true],
      ['customers', false],
      ['invoices', true],
    ]);
  });
});

describe('remote-keyed ledger writes', () => {
  it('updates a synced document by its remote id whatever its number and year; numbers may repeat', async () => {
    const [kept] = await rows({ origin, remote_id: '77' });
    const [id] = await db.transaction((trx) => upsertRemoteDocuments(trx, org, origin, [doc({ remote_id: '77', document_number: 'INV-77-S', fiscal_year: '2024', amount_open: '40' })]));
    expect(id).toBe(kept!.id);
    // Two QuickBooks invoices may carry the same DocNumber (and an edit may swap numbers): both stay.
    const ids = await upsertRemoteDocuments(db, org, origin, [doc({ remote_id: '79', document_number: 'INV-78' }), doc({ remote_id: '78', document_number: 'INV-79' })]);
    expect(new Set(ids).size).toBe(2);
    const synced = await rows({ origin });
    expect(synced.filter((d) => d.remote_id).map((d) => [d.remote_id, d.document_number, d.fiscal_year, d.amount_open])).toEqual([
      ['77', 'INV-77-S', '2024', '40.0000'],
      ['79', 'INV-78', '2026', '100.0000'],
      ['78', 'INV-79', '2026', '100.0000'],
    ]);
    // The push keeps its natural key, beside a synced document with the same number.
    const [a] = await upsertDocuments(db, org, 'middleware', [doc({ remote_id: 'x', document_number: 'INV-78' })]);
    const [b] = await upsertDocuments(db, org, 'middleware', [doc({ remote_id: 'y', document_number: 'INV-78', amount_open: '5' })]);
    expect(a).toBe(b);
    await expect(upsertDocuments(db, org, origin, [])).rejects.toThrow(/upsertRemoteDocuments/);
  });

  it('closes deleted documents, and revives one the source returns again', async () => {
    expect(await markRemoteDocumentsDeleted(db, org, origin, 'invoice', ['79', 'nope'])).toBe(1);
    expect(await markRemoteDocumentsDeleted(db, org, origin, 'invoice', ['79'])).toBe(0);
    expect((await rows({ origin, remote_id: '79' }))[0]).toMatchObject({ amount_open: '0.0000', status_open: false });
    await upsertRemoteDocuments(db, org, origin, [doc({ remote_id: '79', document_number: 'INV-78' })]);
    expect((await rows({ origin, remote_id: '79' }))[0]).toMatchObject({ amount_open: '100.0000', status_open: true, remote_deleted_at: null });
    // A full read that wrote only 77 and 79 since `start` closes 78.
    const start = new Date((await db.raw('SELECT now() AS t')).rows[0].t);
    await new Promise((r) => setTimeout(r, 5));
    await upsertRemoteDocuments(db, org, origin, [doc({ remote_id: '77', document_number: 'INV-77-S' }), doc({ remote_id: '79', document_number: 'INV-78' })]);
    expect(await closeDocumentsNotSeenSince(db, org, origin, 'invoice', start)).toBe(1);
    expect((await rows({ origin, remote_id: '78' }))[0]).toMatchObject({ amount_open: '0.0000', status_open: false });
  });
});
