/**
 * User adjustments (fees, write-offs, …) and the ledger accounts they book to: reading them (the
 * system adjustments exist from an organization's first access), creating, changing and deleting.
 */
import { ConflictError, NotFoundError, ValidationError, type Db, type PageRequest } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import type { LedgerClassification } from '../domain-types/adjustments.js';
import {
  deleteAdjustment as deleteAdjustmentRow,
  getAdjustment,
  getLedgerAccount,
  insertAdjustment,
  insertLedgerAccount,
  listAdjustments,
  listLedgerAccounts,
  updateAdjustment as updateAdjustmentRow,
  type AdjustmentInput,
  type AdjustmentRow,
  type LedgerAccountRow,
} from '../store/adjustments.js';
import { ensureSystemAdjustments } from './system-adjustments.js';

type Page = Pick<PageRequest, 'offset' | 'pageSize'>;

export function unknownLedgerAccount(): ValidationError {
  return new ValidationError([{ loc: ['body', 'ledger_account_id'], msg: 'No ledger account with this id in the organization.', type: 'not_found' }]);
}

function noAdjustment(id: string): NotFoundError {
  return new NotFoundError(`No adjustment ${id}.`);
}

/** A page of the organization's adjustments, ordered by name (system adjustments included). */
export async function adjustmentPage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, filter: { isActive?: boolean }, page: Page) {
  await ensureSystemAdjustments(deps.db, organizationId);
  return listAdjustments(deps.db, organizationId, filter, page.offset, page.pageSize);
}

/** A page of the organization's ledger accounts, ordered by number (the system adjustments' included). */
export async function ledgerAccountPage(deps: Pick<CashAppDeps, 'db'>, organizationId: string, page: Page) {
  await ensureSystemAdjustments(deps.db, organizationId);
  return listLedgerAccounts(deps.db, organizationId, page.offset, page.pageSize);
}

/** Adds a ledger account; a number the organization already has is a 409. */
export async function createLedgerAccount(
  deps: Pick<CashAppDeps, 'db'>,
  organizationId: string,
  input: { name: string; number: string; classification: LedgerClassification },
): Promise<LedgerAccountRow> {
  const row = await insertLedgerAccount(deps.db, organizationId, input);
  if (!row) throw new ConflictError(`The organization already has a ledger account numbered ${input.number}.`);
  return row;
}

/** The organization's adjustment, or 404. */
export async function adjustmentOf(deps: Pick<CashAppDeps, 'db'>, organizationId: string, id: string): Promise<AdjustmentRow> {
  await ensureSystemAdjustments(deps.db, organizationId);
  const row = await getAdjustment(deps.db, organizationId, id);
  if (!row) throw noAdjustment(id);
  return row;
}

export interface NewAdjustment {
  name: string;
  description: string | null;
  is_active: boolean;
  automated: boolean;
  /** an existing ledger account of the organization, or … */
  ledger_account_id?: string;
  /** … a new one, created with the adjustment (its number must be new in the organization, else 409) */
  ledger_account?: { name: string; number: string; classification: LedgerClassification };
}

/** Create a user adjustment (and its inline ledger account) in one transaction. */
export async function createAdjustment(deps: { db: Db }, organizationId: string, input: NewAdjustment): Promise<AdjustmentRow> {
  const id = await deps.db.transaction(async (trx) => {
    let accountId = input.ledger_account_id;
    if (input.ledger_account) {
      const created = await insertLedgerAccount(trx, organizationId, input.ledger_account);
      if (!created) {
        throw new ConflictError(`The organization already has a ledger account numbered ${input.ledger_account.number}; pass its ledger_account_id.`);
      }
      accountId = created.id;
    } else if (!accountId || !(await getLedgerAccount(trx, organizationId, accountId))) {
      throw unknownLedgerAccount();
    }
    return insertAdjustment(trx, organizationId, {
      name: input.name,
      description: input.description,
      is_active: input.is_active,
      automated: input.automated,
      ledger_account_id: accountId,
    });
  });
  return (await getAdjustment(deps.db, organizationId, id))!;
}

/**
 * Changes only the fields given (an empty patch answers the adjustment as it is); a ledger account
 * of another organization, or none, is a 422, an unknown adjustment a 404.
 */
export async function updateAdjustment(deps: Pick<CashAppDeps, 'db'>, organizationId: string, id: string, patch: Partial<AdjustmentInput>): Promise<AdjustmentRow> {
  if (patch.ledger_account_id && !(await getLedgerAccount(deps.db, organizationId, patch.ledger_account_id))) throw unknownLedgerAccount();
  const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<AdjustmentInput>;
  const found = Object.keys(changes).length ? await updateAdjustmentRow(deps.db, organizationId, id, changes) : Boolean(await getAdjustment(deps.db, organizationId, id));
  if (!found) throw noAdjustment(id);
  return (await getAdjustment(deps.db, organizationId, id))!;
}

/** Deletes a user adjustment no allocation uses; system adjustments and used ones are a 409 (deactivate them instead). */
export async function deleteAdjustment(deps: Pick<CashAppDeps, 'db'>, organizationId: string, id: string): Promise<void> {
  const outcome = await deleteAdjustmentRow(deps.db, organizationId, id);
  if (outcome === 'not_found') throw noAdjustment(id);
  if (outcome === 'system') throw new ConflictError('System adjustments cannot be deleted; deactivate it with is_active false instead.');
  if (outcome === 'in_use') throw new ConflictError('The adjustment is used by payment allocations and cannot be deleted; deactivate it instead.');
}
