/** Adjustments and ledger accounts in the database: reads, inserts (the system ones idempotently), changes and deletes. */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { LedgerClassification, SystemAdjustmentDef } from '../domain-types/adjustments.js';

export interface AdjustmentRow {
  id: string;
  organization_id: string;
  name: string;
  description: string | null;
  is_active: boolean;
  is_system: boolean;
  automated: boolean;
  system_key: string | null;
  ledger_account_id: string;
  created_at: Date;
  modified_at: Date;
  // the joined ledger account
  la_name: string;
  la_number: string;
  la_classification: LedgerClassification;
  la_created_at: Date;
  la_modified_at: Date;
  /** a payment allocation uses the adjustment */
  in_use: boolean;
}

export interface LedgerAccountRow {
  id: string;
  organization_id: string;
  name: string;
  number: string;
  classification: LedgerClassification;
  created_at: Date;
  modified_at: Date;
}

function withLedgerAccount(db: Db, organizationId: string) {
  return db('adjustments as a')
    .join('ledger_accounts as la', function () {
      this.on('la.id', '=', 'a.ledger_account_id').andOn('la.organization_id', '=', 'a.organization_id');
    })
    .where('a.organization_id', organizationId)
    .select(
      'a.*',
      'la.name as la_name',
      'la.number as la_number',
      'la.classification as la_classification',
      'la.created_at as la_created_at',
      'la.modified_at as la_modified_at',
      db.raw('EXISTS (SELECT 1 FROM payment_allocations pa WHERE pa.organization_id = a.organization_id AND pa.adjustment_id = a.id) AS in_use'),
    );
}

export async function listAdjustments(db: Db, organizationId: string, filter: { isActive?: boolean }, offset: number, limit: number) {
  const scoped = () => {
    const q = db('adjustments').where({ organization_id: organizationId });
    return filter.isActive === undefined ? q : q.andWhere({ is_active: filter.isActive });
  };
  const rowsQuery = withLedgerAccount(db, organizationId);
  if (filter.isActive !== undefined) rowsQuery.andWhere('a.is_active', filter.isActive);
  const [rows, [{ count }]] = await Promise.all([
    rowsQuery.orderBy('a.name').orderBy('a.id').offset(offset).limit(limit),
    scoped().count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as AdjustmentRow[], total: Number(count) };
}

export async function getAdjustment(db: Db, organizationId: string, id: string): Promise<AdjustmentRow | undefined> {
  return withLedgerAccount(db, organizationId).andWhere('a.id', id).first();
}

/** Keys of the system adjustments the organization already has. */
export async function systemAdjustmentKeys(db: Db, organizationId: string): Promise<string[]> {
  return db('adjustments').where({ organization_id: organizationId }).whereNotNull('system_key').pluck('system_key');
}

/**
 * Insert the organization's missing system adjustments and their ledger accounts. Existing rows are
 * kept as they are (an account with the same number is reused), so running it again, or from two
 * requests at once, is harmless.
 */
export async function insertSystemAdjustments(trx: Knex.Transaction, organizationId: string, defs: readonly SystemAdjustmentDef[]): Promise<void> {
  const accounts = defs.map((d) => ({
    id: newId(),
    organization_id: organizationId,
    name: d.ledgerAccount.name,
    number: d.ledgerAccount.number,
    classification: d.ledgerAccount.classification,
  }));
  await trx('ledger_accounts').insert(accounts).onConflict(['organization_id', 'number']).ignore();
  const numbers = defs.map((d) => d.ledgerAccount.number);
  const found = (await trx('ledger_accounts').where({ organization_id: organizationId }).whereIn('number', numbers).select('id', 'number')) as {
    id: string;
    number: string;
  }[];
  const accountId = new Map(found.map((a) => [a.number, a.id]));
  const adjustments = defs.map((d) => ({
    id: newId(),
    organization_id: organizationId,
    name: d.name,
    description: d.description,
    is_active: true,
    is_system: true,
    automated: d.automated,
    system_key: d.key,
    ledger_account_id: accountId.get(d.ledgerAccount.number)!,
  }));
  await trx.raw('? ON CONFLICT (organization_id, system_key) WHERE system_key IS NOT NULL DO NOTHING', [trx('adjustments').insert(adjustments)]);
}

export async function getLedgerAccount(db: Db | Knex.Transaction, organizationId: string, id: string): Promise<LedgerAccountRow | undefined> {
  return db<LedgerAccountRow>('ledger_accounts').where({ organization_id: organizationId, id }).first();
}

export async function listLedgerAccounts(db: Db, organizationId: string, offset: number, limit: number) {
  const [rows, [{ count }]] = await Promise.all([
    db<LedgerAccountRow>('ledger_accounts').where({ organization_id: organizationId }).orderBy('number').orderBy('id').offset(offset).limit(limit),
    db('ledger_accounts').where({ organization_id: organizationId }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as LedgerAccountRow[], total: Number(count) };
}

/** Insert a ledger account; undefined when the organization already has an account with that number. */
export async function insertLedgerAccount(
  trx: Db | Knex.Transaction,
  organizationId: string,
  input: { name: string; number: string; classification: LedgerClassification },
): Promise<LedgerAccountRow | undefined> {
  const [row] = await trx('ledger_accounts')
    .insert({ id: newId(), organization_id: organizationId, ...input })
    .onConflict(['organization_id', 'number'])
    .ignore()
    .returning('*');
  return row as LedgerAccountRow | undefined;
}

export interface AdjustmentInput {
  name: string;
  description: string | null;
  is_active: boolean;
  automated: boolean;
  ledger_account_id: string;
}

export async function insertAdjustment(trx: Db | Knex.Transaction, organizationId: string, input: AdjustmentInput): Promise<string> {
  const id = newId();
  await trx('adjustments').insert({ id, organization_id: organizationId, is_system: false, system_key: null, ...input });
  return id;
}

/** Update the given fields; false when the adjustment does not exist in the organization. */
export async function updateAdjustment(db: Db, organizationId: string, id: string, patch: Partial<AdjustmentInput>): Promise<boolean> {
  const n = await db('adjustments')
    .where({ organization_id: organizationId, id })
    .update({ ...patch, modified_at: db.fn.now() });
  return n > 0;
}

/** Delete a user adjustment that no payment allocation uses; the outcome says why not otherwise. */
export async function deleteAdjustment(db: Db, organizationId: string, id: string): Promise<'deleted' | 'not_found' | 'system' | 'in_use'> {
  try {
    return await db.transaction(async (trx) => {
      // The row lock makes a concurrent allocation insert (FOR KEY SHARE through its foreign key) wait for us, or us for it.
      const row = await trx('adjustments').where({ organization_id: organizationId, id }).forUpdate().first('is_system');
      if (!row) return 'not_found' as const;
      if (row.is_system) return 'system' as const;
      const used = await trx('payment_allocations').where({ organization_id: organizationId, adjustment_id: id }).first(trx.raw('1 AS one'));
      if (used) return 'in_use' as const;
      await trx('adjustments').where({ organization_id: organizationId, id }).delete();
      return 'deleted' as const;
    });
  } catch (err) {
    // payment_allocations.adjustment_id is ON DELETE RESTRICT: an allocation referencing it exists.
    if ((err as { code?: string }).code === '23503') return 'in_use';
    throw err;
  }
}
