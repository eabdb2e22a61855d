/**
 * Disputes (DESIGN §10): a customer contests an invoice (wrong price, damaged goods…). While a
 * dispute is open its invoice is never chased (the collections engine reads this table); one open
 * dispute per invoice, backed by the partial unique index so two requests at once get one 409.
 */
import { ConflictError, getDocuments, getPartner, Money, NotFoundError, recordEvent, ValidationError, type Db, type Identity } from '@rp/platform';
import { closeDispute, disputeFromInboxMessage, getDispute, insertDispute, listDisputes, openDisputeOf, type DisputeFilters, type DisputeReason, type DisputeRow } from '../../store/collections/disputes.js';
import { disputeView } from '../../views/collections/promises.js';
import { amountIssue } from './promises.js';

export { DISPUTE_REASONS } from '../../store/collections/disputes.js';

export interface NewDispute {
  invoice_id: string;
  reason_code: DisputeReason;
  /** decimal string; null/absent: the whole invoice */
  amount?: string | null;
  note?: string | null;
  /** the inbox message the dispute was read from (not settable through the API) */
  source_inbox_message_id?: string | null;
}

/**
 * Opens a dispute on an invoice of the organization within the caller's business units (open or
 * closed: a customer may contest an invoice it already paid). The amount, when given, is in the
 * invoice's currency and minor units and at most the invoice's amount.
 */
export async function createDispute({ db }: { db: Db }, identity: Identity, input: NewDispute): Promise<DisputeRow> {
  const doc = (await getDocuments(db, identity.org, [input.invoice_id], identity.bu)).get(input.invoice_id);
  const partner = doc?.kind === 'invoice' && doc.partner_id ? await getPartner(db, identity.org, doc.partner_id, identity.bu) : null;
  if (!doc || !partner) throw new ValidationError([{ loc: ['body', 'invoice_id'], msg: 'is not an invoice of a customer of this organization', type: 'value_error.not_found' }]);
  const currency = doc.currency.trim();
  if (input.amount != null) {
    const issue = amountIssue(input.amount, currency, ['body', 'amount']);
    if (issue) throw new ValidationError([issue]);
    const invoiceAmount = new Money(doc.amount_in_document_currency).abs();
    if (new Money(input.amount).gt(invoiceAmount)) {
      throw new ValidationError([{ loc: ['body', 'amount'], msg: `must not exceed the invoice's amount ${invoiceAmount.toFixed()} ${currency}`, type: 'value_error.number.not_le' }]);
    }
  }
  return db.transaction(async (trx) => {
    // a dispute read from a message is opened once per invoice, however often the reading is acted on
    if (input.source_inbox_message_id) {
      const existing = await disputeFromInboxMessage(trx, identity.org, input.source_inbox_message_id, doc.id);
      if (existing) return existing;
    }
    const open = await openDisputeOf(trx, identity.org, doc.id);
    if (open) throw new ConflictError(`Invoice ${doc.id} has an open dispute (${open.id}); resolve or reject it first.`);
    const row = await insertDispute(trx, {
      organization_id: identity.org,
      invoice_id: doc.id,
      partner_id: partner.id,
      business_unit_id: partner.business_unit_id,
      reason_code: input.reason_code,
      amount: input.amount ?? null,
      currency,
      note: input.note ?? null,
      created_by: identity.sub,
      source_inbox_message_id: input.source_inbox_message_id ?? null,
    });
    if (row === 'conflict') throw new ConflictError(`Invoice ${doc.id} has an open dispute; resolve or reject it first.`);
    await recordEvent(trx, { organizationId: identity.org, type: 'dispute.created', resourceId: row.id, object: disputeView(row), businessUnitId: row.business_unit_id });
    return row;
  });
}

export async function disputeOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<DisputeRow> {
  const row = await getDispute(db, identity.org, id, identity.bu);
  if (!row) throw new NotFoundError(`No dispute ${id}.`);
  return row;
}

export async function disputesOf({ db }: { db: Db }, identity: Identity, filters: DisputeFilters, page: { offset: number; pageSize: number }) {
  return listDisputes(db, identity.org, identity.bu, filters, page.offset, page.pageSize);
}

/** Resolves or rejects an open dispute (409 otherwise) and records `dispute.resolved` (its status says which). */
export async function resolveDispute({ db }: { db: Db }, identity: Identity, id: string, input: { status: 'resolved' | 'rejected'; resolution: string }): Promise<DisputeRow> {
  return db.transaction(async (trx) => {
    const current = await getDispute(trx, identity.org, id, identity.bu, true);
    if (!current) throw new NotFoundError(`No dispute ${id}.`);
    if (current.status !== 'open') throw new ConflictError(`The dispute is ${current.status} already; only an open dispute can be resolved.`);
    const row = (await closeDispute(trx, identity.org, id, input.status, input.resolution, identity.sub))!;
    await recordEvent(trx, { organizationId: identity.org, type: 'dispute.resolved', resourceId: row.id, object: disputeView(row), businessUnitId: row.business_unit_id });
    return row;
  });
}
