/**
 * Ledger writes that record their events (invoice.created / updated / closed, partner.created /
 * updated) in the same transaction: the rows a batch will change are read (locked) first, the batch
 * is written with its one set-based statement, the rows are read again, and one event is recorded
 * per record whose view changed, all in one multi-row insert. A re-push or re-sync that changes
 * nothing a consumer can see records nothing (`modified_at` alone does not count).
 *
 * - `invoice.created`: the statement inserted the document.
 * - `invoice.closed`: the document was open (`status_open` true) and no longer is (settled in the
 *   ERP, or deleted at the source); it takes the place of `invoice.updated` for that change.
 * - `invoice.updated`: any other change of the view; `previous_attributes` has the changed fields'
 *   earlier values (closed events carry them too). Credit memos are reported by the same events.
 * - a partner upsert also links waiting documents to the partner: each one's change is an
 *   `invoice.updated` (its `partner_id`, maybe its `business_unit_id`).
 */
import { effectiveAssignees, partnerSummaryView, previousAttributes, recordEvents, type NewEvent } from '@rp/platform';
import type { DocumentUpsert, PartnerUpsert } from '../types.js';
import { documentKeyOf, writeDocuments, writePartners, type DocumentWriteOptions } from '../store/ledger.js';
import type { Db } from '../store/ledger-sql.js';
import {
  closeDocuments,
  documentViewRows,
  lockDocumentsAwaitingPartners,
  lockDocumentsByKey,
  lockDocumentsToClose,
  lockPartnersByRemoteId,
  partnerViewRows,
  type DocumentViewRow,
  type PartnerViewRow,
} from '../store/ledger-views.js';
import { invoiceView } from '../views/invoices.js';

/**
 * A row the batch updated was not there when the batch read its "before" (another transaction
 * inserted it meanwhile), so its change cannot be told: the transaction is retried as a
 * serialization failure (SQLSTATE 40001), and the retry reads that row as it now is.
 */
export class ConcurrentLedgerWriteError extends Error {
  readonly code = '40001';
  constructor(what: string) {
    super(`${what} was written concurrently by another request; retry`);
    this.name = 'ConcurrentLedgerWriteError';
  }
}

function changeEvent<V extends { id: string; business_unit_id: string | null }>(
  organizationId: string,
  types: { created: NewEvent['type']; updated: NewEvent['type'] },
  before: V | undefined,
  after: V,
  inserted: boolean,
  closed?: (before: V, after: V) => boolean,
): NewEvent | null {
  const base = { organizationId, resourceId: after.id, object: after, businessUnitId: after.business_unit_id };
  if (inserted) return { ...base, type: types.created };
  if (!before) throw new ConcurrentLedgerWriteError(`${types.created.split('.')[0]} ${after.id}`);
  const changed = previousAttributes(before, after);
  if (!changed) return null;
  return { ...base, type: closed?.(before, after) ? 'invoice.closed' : types.updated, previousAttributes: changed };
}

const INVOICE_TYPES = { created: 'invoice.created', updated: 'invoice.updated' } as const;
const PARTNER_TYPES = { created: 'partner.created', updated: 'partner.updated' } as const;
const becameClosed = (b: { status_open: boolean }, a: { status_open: boolean }) => b.status_open && !a.status_open;

/** Record the invoice events of documents `ids` (in that order) against their locked `before` rows. */
async function recordDocumentChanges(trx: Db, organizationId: string, before: readonly DocumentViewRow[], ids: readonly string[], inserted: ReadonlySet<string> = new Set()): Promise<void> {
  const unique = [...new Set(ids)];
  const after = new Map((await documentViewRows(trx, organizationId, unique)).map((r) => [r.id, invoiceView(r)]));
  const earlier = new Map(before.map((r) => [r.id, invoiceView(r)]));
  const events = unique.flatMap((id) => {
    const now = after.get(id);
    const e = now ? changeEvent(organizationId, INVOICE_TYPES, earlier.get(id), now, inserted.has(id), becameClosed) : null;
    return e ? [e] : [];
  });
  await recordEvents(trx, events);
}

/** Upsert documents (push or sync, keyed as `origin` decides) and record their events; returns their ids in input order. */
export async function writeDocumentsRecordingEvents(trx: Db, organizationId: string, origin: string, rows: readonly DocumentUpsert[], opts: DocumentWriteOptions = {}): Promise<string[]> {
  const key = documentKeyOf(origin);
  const before = await lockDocumentsByKey(trx, organizationId, origin, rows, key);
  const written = await writeDocuments(trx, organizationId, origin, rows, key, opts);
  await recordDocumentChanges(trx, organizationId, before, written.ids, written.inserted);
  return written.ids;
}

/**
 * Close the origin's live documents of `kind` that the source deleted (by remote id, or not seen
 * since a full read started) and record `invoice.closed` (or `invoice.updated` for one that was
 * already closed); returns how many were closed.
 */
export async function closeDeletedDocumentsRecordingEvents(
  trx: Db,
  organizationId: string,
  origin: string,
  kind: DocumentUpsert['kind'],
  which: { remoteIds: readonly string[] } | { notSeenSince: Date },
): Promise<number> {
  const before = await lockDocumentsToClose(trx, organizationId, origin, kind, which);
  const ids = before.map((r) => r.id);
  await closeDocuments(trx, organizationId, ids);
  await recordDocumentChanges(trx, organizationId, before, ids);
  return ids.length;
}

/** The partner as `GET /v2/partners` lists it (its summary and today's effective assignee). */
export async function partnerViews(trx: Db, organizationId: string, rows: readonly PartnerViewRow[]) {
  return effectiveAssignees(trx, organizationId, rows.map(partnerSummaryView));
}

/** Record partner events of `ids` (in that order) against their locked `before` rows. */
export async function recordPartnerChanges(trx: Db, organizationId: string, before: readonly PartnerViewRow[], ids: readonly string[], inserted: ReadonlySet<string> = new Set()): Promise<void> {
  const unique = [...new Set(ids)];
  const [earlierViews, afterViews] = await Promise.all([partnerViews(trx, organizationId, before), partnerViewRows(trx, organizationId, unique).then((r) => partnerViews(trx, organizationId, r))]);
  const earlier = new Map(earlierViews.map((v) => [v.id, v]));
  const after = new Map(afterViews.map((v) => [v.id, v]));
  const events = unique.flatMap((id) => {
    const now = after.get(id);
    const e = now ? changeEvent(organizationId, PARTNER_TYPES, earlier.get(id), now, inserted.has(id)) : null;
    return e ? [e] : [];
  });
  await recordEvents(trx, events);
}

/**
 * Upsert partners (push or sync) and record their events, and the `invoice.updated` of documents
 * the upsert links to them; returns the partners' ids in input order.
 */
export async function writePartnersRecordingEvents(trx: Db, organizationId: string, origin: string, rows: readonly PartnerUpsert[]): Promise<string[]> {
  const remoteIds = rows.map((r) => r.remote_id);
  const before = await lockPartnersByRemoteId(trx, organizationId, origin, remoteIds);
  const waiting = await lockDocumentsAwaitingPartners(trx, organizationId, origin, remoteIds);
  const written = await writePartners(trx, organizationId, origin, rows);
  await recordPartnerChanges(trx, organizationId, before, written.ids, written.inserted);
  await recordDocumentChanges(trx, organizationId, waiting, waiting.map((d) => d.id));
  return written.ids;
}
