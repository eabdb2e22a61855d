/**
 * Deduction knowledge (spec 2.7, row 9, rule 4.3.7; issue 15 part 4): saved content per deduction
 * operation, organization-wide (`global`) or for one customer (`customer`, a ledger partner). The
 * effective entry of a partner and operation is the partner's own, else the global one.
 * `partner_name` is read from the ledger (kernel ledger module) when answering, so it follows renames.
 * A partner that is unknown, another organization's, or outside a member's business units is 404.
 */
import { getPartner, isoTime, NotFoundError, type Db, type Identity, type LedgerPartner } from '@rp/platform';
import * as store from '../store/deduction-knowledge.js';

/** The operations of rule 4.3.7, in the spec's order. */
export const DEDUCTION_OPERATIONS = [
  'identify_document_customer',
  'classify_document_type',
  'parse_backup',
  'parse_remittance',
  'assign_deduction_reason_code',
  'assign_line_item_reason_codes',
  'match_inventory',
  'match_vendor',
  'match_claims_and_deductions',
  'generate_credit_memo',
  'generate_alerts',
] as const;
export type DeductionOperation = (typeof DEDUCTION_OPERATIONS)[number];

export function entryView(r: store.DeductionKnowledgeRow, partner: Pick<LedgerPartner, 'name'> | null) {
  return {
    object: 'deduction_knowledge' as const,
    id: r.id,
    operation: r.operation,
    scope: r.scope,
    content: r.content,
    partner_id: r.partner_id,
    partner_name: r.partner_id && partner ? partner.name : null,
    created_at: isoTime(r.created_at)!,
    modified_at: isoTime(r.modified_at)!,
  };
}

async function partnerOrThrow(db: Db, identity: Identity, partnerId: string): Promise<LedgerPartner> {
  const partner = await getPartner(db, identity.org, partnerId, identity.bu);
  if (!partner) throw new NotFoundError(`No partner ${partnerId}.`);
  return partner;
}

export async function putCustomerEntry(db: Db, identity: Identity, partnerId: string, operation: DeductionOperation, content: string | null) {
  const partner = await partnerOrThrow(db, identity, partnerId);
  return entryView(await store.upsertEntry(db, identity.org, partner.id, operation, content), partner);
}

export async function putGlobalEntry(db: Db, identity: Identity, operation: DeductionOperation, content: string | null) {
  return entryView(await store.upsertEntry(db, identity.org, null, operation, content), null);
}

/** Every operation's effective entry for the partner, in the order of rule 4.3.7; operations with neither entry are listed apart. */
export async function effectiveEntries(db: Db, identity: Identity, partnerId: string) {
  const partner = await partnerOrThrow(db, identity, partnerId);
  const rows = await store.entriesForPartner(db, identity.org, partner.id);
  const entries = [];
  const missing: DeductionOperation[] = [];
  for (const op of DEDUCTION_OPERATIONS) {
    const own = rows.find((r) => r.operation === op && r.partner_id === partner.id);
    const global = rows.find((r) => r.operation === op && r.partner_id === null);
    const effective = own ?? global;
    if (effective) entries.push(entryView(effective, partner));
    else missing.push(op);
  }
  return { object: 'deduction_knowledge_partner' as const, partner_id: partner.id, partner_name: partner.name, data: entries, operations_without_entry: missing };
}

export async function listGlobalEntries(db: Db, identity: Identity) {
  const rows = await store.globalEntries(db, identity.org);
  const order = (op: string) => DEDUCTION_OPERATIONS.indexOf(op as DeductionOperation);
  return rows.sort((a, b) => order(a.operation) - order(b.operation)).map((r) => entryView(r, null));
}

export async function deleteCustomerEntry(db: Db, identity: Identity, partnerId: string, operation: DeductionOperation): Promise<void> {
  const partner = await partnerOrThrow(db, identity, partnerId);
  if (!(await store.deleteEntry(db, identity.org, partner.id, operation))) {
    throw new NotFoundError(`Partner ${partnerId} has no ${operation} entry of its own.`);
  }
}

export async function deleteGlobalEntry(db: Db, identity: Identity, operation: DeductionOperation): Promise<void> {
  if (!(await store.deleteEntry(db, identity.org, null, operation))) throw new NotFoundError(`No global ${operation} entry.`);
}
