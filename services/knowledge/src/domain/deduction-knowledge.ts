/**
 * Deduction knowledge (spec 2.7, row 9, rule 4.3.7): saved content per deduction
 * operation, organization-wide (`global`) or for one customer (`customer`, a ledger partner). The
 * effective entry of a partner and operation is the partner's own, else the global one.
 * `partner_name` is read from the ledger (kernel ledger module) when answering, so it follows renames.
 * A partner that is unknown, another organization's, or outside a member's business units is 404.
 */
import { getPartner, NotFoundError, type Db, type Identity, type LedgerPartner } from '@rp/platform';
import * as store from '../store/deduction-knowledge.js';
import { DEDUCTION_OPERATIONS, type DeductionOperation } from '../types.js';

/** A partner's effective entries in the order of rule 4.3.7, and the operations with neither entry. */
export interface PartnerEntries {
  partner: LedgerPartner;
  entries: store.DeductionKnowledgeRow[];
  missing: DeductionOperation[];
}

async function partnerOrThrow(db: Db, identity: Identity, partnerId: string): Promise<LedgerPartner> {
  const partner = await getPartner(db, identity.org, partnerId, identity.bu);
  if (!partner) throw new NotFoundError(`No partner ${partnerId}.`);
  return partner;
}

export async function putCustomerEntry({ db }: { db: Db }, identity: Identity, partnerId: string, operation: DeductionOperation, content: string | null) {
  const partner = await partnerOrThrow(db, identity, partnerId);
  return { entry: await store.upsertEntry(db, identity.org, partner.id, operation, content), partner };
}

export async function putGlobalEntry({ db }: { db: Db }, identity: Identity, operation: DeductionOperation, content: string | null): Promise<store.DeductionKnowledgeRow> {
  return store.upsertEntry(db, identity.org, null, operation, content);
}

/** Every operation's effective entry for the partner, in the order of rule 4.3.7; operations with neither entry are listed apart. */
export async function effectiveEntries({ db }: { db: Db }, identity: Identity, partnerId: string): Promise<PartnerEntries> {
  const partner = await partnerOrThrow(db, identity, partnerId);
  const rows = await store.entriesForPartner(db, identity.org, partner.id);
  const entries: store.DeductionKnowledgeRow[] = [];
  const missing: DeductionOperation[] = [];
  for (const op of DEDUCTION_OPERATIONS) {
    const own = rows.find((r) => r.operation === op && r.partner_id === partner.id);
    const global = rows.find((r) => r.operation === op && r.partner_id === null);
    const effective = own ?? global;
    if (effective) entries.push(effective);
    else missing.push(op);
  }
  return { partner, entries, missing };
}

export async function listGlobalEntries({ db }: { db: Db }, identity: Identity): Promise<store.DeductionKnowledgeRow[]> {
  const rows = await store.globalEntries(db, identity.org);
  const order = (op: string) => DEDUCTION_OPERATIONS.indexOf(op as DeductionOperation);
  return rows.sort((a, b) => order(a.operation) - order(b.operation));
}

export async function deleteCustomerEntry({ db }: { db: Db }, identity: Identity, partnerId: string, operation: DeductionOperation): Promise<void> {
  const partner = await partnerOrThrow(db, identity, partnerId);
  if (!(await store.deleteEntry(db, identity.org, partner.id, operation))) {
    throw new NotFoundError(`Partner ${partnerId} has no ${operation} entry of its own.`);
  }
}

export async function deleteGlobalEntry({ db }: { db: Db }, identity: Identity, operation: DeductionOperation): Promise<void> {
  if (!(await store.deleteEntry(db, identity.org, null, operation))) throw new NotFoundError(`No global ${operation} entry.`);
}
