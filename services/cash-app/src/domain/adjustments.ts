/**
 * User adjustments (fees, write-offs, …) and the ledger accounts they book to.
 */
import { ConflictError, ValidationError, type Db } from '@rp/platform';
import type { LedgerClassification } from './ledger-accounts.js';
import { getAdjustment, getLedgerAccount, insertAdjustment, insertLedgerAccount, type AdjustmentRow } from '../store/adjustments.js';

export function unknownLedgerAccount(): ValidationError {
  return new ValidationError([{ loc: ['body', 'ledger_account_id'], msg: 'No ledger account with this id in the organization.', type: 'not_found' }]);
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
export async function createAdjustment(db: Db, organizationId: string, input: NewAdjustment): Promise<AdjustmentRow> {
  const id = await db.transaction(async (trx) => {
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
  return (await getAdjustment(db, organizationId, id))!;
}
