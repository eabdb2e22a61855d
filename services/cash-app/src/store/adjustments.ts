import { isoTime, newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';
import type { LedgerClassification } from '../domain/ledger-accounts.js';
import type { SystemAdjustmentDef } from '../domain/system-adjustments.js';

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
}

export function adjustmentView(row: AdjustmentRow) {
  return {
    object: 'adjustment' as const,
    id: row.id,
    name: row.name,
    description: row.description,
    is_active: row.is_active,
    is_system: row.is_system,
    automated: row.automated,
    ledger_account_id: row.ledger_account_id,
    ledger_account: {
      object: 'ledger_account' as const,
      id: row.ledger_account_id,
      name: row.la_name,
      number: row.la_number,
      classification: row.la_classification,
      created_at: isoTime(row.la_created_at)!,
      modified_at: isoTime(row.la_modified_at)!,
    },
    can_delete: !row.is_system,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
  };
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
