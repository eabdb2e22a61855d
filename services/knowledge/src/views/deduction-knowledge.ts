/** API shapes of deduction knowledge (spec 2.7, row 9): one entry, and a partner's effective entries. */
import { isoTime, type LedgerPartner } from '@rp/platform';
import type { DeductionKnowledgeRow } from '../store/deduction-knowledge.js';
import type { DeductionOperation } from '../types.js';

export function entryView(r: DeductionKnowledgeRow, partner: Pick<LedgerPartner, 'name'> | null) {
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

/** `partner_name` comes from the ledger when answering, so it follows renames. */
export function partnerEntriesView(partner: Pick<LedgerPartner, 'id' | 'name'>, effective: DeductionKnowledgeRow[], missing: DeductionOperation[]) {
  return {
    object: 'deduction_knowledge_partner' as const,
    partner_id: partner.id,
    partner_name: partner.name,
    data: effective.map((r) => entryView(r, partner)),
    operations_without_entry: missing,
  };
}
