/**
 * cash-app's events (the kernel's transactional outbox, DESIGN §10): each is recorded inside the
 * transaction of the change it reports, with `data.object` built by the route's own view from rows
 * read in that transaction after the change, so it is the resource exactly as GET answers it then.
 * Callers record only when their write changed something (a retried activity records nothing).
 *
 * Business units: a payment (and a remittance) is visible to a member when its payer and every
 * ledger document it names are tied to no unit or to one of the member's (store paymentInScopeSql).
 * An event carries one unit, so it gets the one unit those records are tied to; none when they are
 * tied to none; and SEVERAL_BUSINESS_UNITS when they span several: no member's scope holds that id,
 * so only callers who see every unit (admins, API keys) read such an event — a member never reads an
 * event of a payment that GET would hide from them.
 */
import type { Knex } from 'knex';
import { getDocuments, getPartners, MEMBERS_EXCLUDED_BUSINESS_UNIT, recordEvent, recordEvents, type EventType, type NewEvent } from '@rp/platform';
import { getOutreach, getReceiptPayment, type OutreachRow } from '../store/outreach.js';
import { getStatement } from '../store/bank-statements.js';
import { paymentsByIds } from '../store/payments.js';
import { outreachView } from '../views/outreach.js';
import { paymentView } from '../views/payments.js';
import { statementView } from '../views/bank-statements.js';
import { paymentRecordsOf } from './payment-record-reads.js';

/** The business unit of an event whose resource spans several units (the nil UUID: never a unit's id). */
export const SEVERAL_BUSINESS_UNITS = MEMBERS_EXCLUDED_BUSINESS_UNIT;

/** The one unit among `units` (nulls: tied to none), null when there is none, SEVERAL_BUSINESS_UNITS when several. */
export function businessUnitOf(units: Iterable<string | null | undefined>): string | null {
  const distinct = new Set<string>();
  for (const u of units) if (u) distinct.add(u);
  if (distinct.size === 0) return null;
  return distinct.size === 1 ? [...distinct][0]! : SEVERAL_BUSINESS_UNITS;
}

export type PaymentEventType = Extract<EventType, `payment.${string}`>;

/**
 * Records one `type` event per payment of `paymentIds` (read in `trx`, views built in bulk: one query
 * per kind of row for the whole batch, one multi-row insert of the events).
 */
export async function recordPaymentEvents(trx: Knex.Transaction, organizationId: string, type: PaymentEventType, paymentIds: readonly string[]): Promise<void> {
  if (paymentIds.length === 0) return;
  const rows = await paymentsByIds(trx, organizationId, paymentIds);
  const { records, documents } = await paymentRecordsOf(trx, organizationId, rows);
  const partners = await getPartners(trx, organizationId, rows.flatMap((r) => (r.partner_id ? [r.partner_id] : [])));
  const byId = new Map(records.map((r) => [r.row.id, r]));
  const events: NewEvent[] = [];
  for (const id of paymentIds) {
    const record = byId.get(id);
    if (!record) continue; // removed in this transaction: nothing to report
    const units = [record.row.partner_id ? partners.get(record.row.partner_id)?.business_unit_id : null, ...record.allocations.map((a) => documents.get(a.invoice_id)?.business_unit_id)];
    events.push({ organizationId, type, resourceId: id, object: paymentView(record), businessUnitId: businessUnitOf(units) });
  }
  await recordEvents(trx, events);
}

/** Records a `bank_statement.*` event of the statement as GET answers it without its transactions (statements are tied to no unit). */
export async function recordStatementEvent(trx: Knex.Transaction, organizationId: string, type: Extract<EventType, `bank_statement.${string}`>, statementId: string): Promise<void> {
  const row = await getStatement(trx, organizationId, statementId);
  if (!row) return;
  await recordEvent(trx, { organizationId, type, resourceId: row.id, object: statementView(row), businessUnitId: null });
}

/** Records an `outreach.*` event of the record; its unit is its customer's and its payment's (see the header). */
export async function recordOutreachEvent(trx: Knex.Transaction, type: Extract<EventType, `outreach.${string}`>, record: Pick<OutreachRow, 'id' | 'organization_id'>): Promise<void> {
  const org = record.organization_id;
  const row = await getOutreach(trx, org, record.id);
  if (!row) return;
  const payment = row.payment_id ? await getReceiptPayment(trx, org, row.payment_id) : null;
  const partnerIds = [row.partner_id, payment?.partner_id].filter((p): p is string => !!p);
  const [partners, documents] = await Promise.all([getPartners(trx, org, partnerIds), getDocuments(trx, org, payment?.allocations.map((a) => a.invoice_id) ?? [])]);
  const units = [...partnerIds.map((p) => partners.get(p)?.business_unit_id), ...[...documents.values()].map((d) => d.business_unit_id)];
  await recordEvent(trx, { organizationId: org, type, resourceId: row.id, object: outreachView(row), businessUnitId: businessUnitOf(units) });
}
