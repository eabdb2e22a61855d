/** Deduction knowledge entries (migration 004): one global entry per operation, one per partner and operation. */
import { newId, type Db } from '@rp/platform';
import type { DeductionOperation } from '../types.js';

export interface DeductionKnowledgeRow {
  id: string;
  organization_id: string;
  operation: DeductionOperation;
  scope: 'global' | 'customer';
  partner_id: string | null;
  content: string | null;
  created_at: Date;
  modified_at: Date;
}

/**
 * Create or update the entry of (partner or global, operation) in one statement: concurrent PUTs of
 * the same key end with one row whose id never changes.
 */
export async function upsertEntry(db: Db, organizationId: string, partnerId: string | null, operation: DeductionOperation, content: string | null): Promise<DeductionKnowledgeRow> {
  const target = partnerId ? '(organization_id, partner_id, operation) WHERE partner_id IS NOT NULL' : '(organization_id, operation) WHERE partner_id IS NULL';
  const res = await db.raw(
    `INSERT INTO deduction_knowledge (id, organization_id, operation, scope, partner_id, content)
     VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT ${target} DO UPDATE SET content = excluded.content, modified_at = now()
     RETURNING *`,
    [newId(), organizationId, operation, partnerId ? 'customer' : 'global', partnerId, content],
  );
  return (res.rows as DeductionKnowledgeRow[])[0]!;
}

/** The partner's own entries and the organization's global ones. */
export async function entriesForPartner(db: Db, organizationId: string, partnerId: string): Promise<DeductionKnowledgeRow[]> {
  return (await db('deduction_knowledge')
    .where({ organization_id: organizationId })
    .andWhere((q) => {
      void q.whereNull('partner_id').orWhere('partner_id', partnerId);
    })) as DeductionKnowledgeRow[];
}

export async function globalEntries(db: Db, organizationId: string): Promise<DeductionKnowledgeRow[]> {
  return (await db('deduction_knowledge').where({ organization_id: organizationId }).whereNull('partner_id')) as DeductionKnowledgeRow[];
}

/** Delete one entry (partner null: the global one); whether there was one. */
export async function deleteEntry(db: Db, organizationId: string, partnerId: string | null, operation: DeductionOperation): Promise<boolean> {
  const q = db('deduction_knowledge').where({ organization_id: organizationId, operation });
  if (partnerId) q.andWhere('partner_id', partnerId);
  else q.whereNull('partner_id');
  return (await q.delete()) > 0;
}
