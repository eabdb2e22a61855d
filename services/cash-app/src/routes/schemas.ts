/** API schemas shared by several cash-app routes. */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';
import { LEDGER_CLASSIFICATIONS } from '../domain-types/adjustments.js';


export const ledgerAccountSchema = z.object({
  object: z.literal('ledger_account'),
  id: z.string(),
  name: z.string(),
  number: z.string(),
  classification: z.enum(LEDGER_CLASSIFICATIONS),
  ...timestampsShape,
})
  .meta({ id: 'LedgerAccount' });

export const adjustmentSchema = z.object({
  object: z.literal('adjustment'),
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  is_active: z.boolean().describe('Available for use.'),
  is_system: z.boolean().describe('Created by the system rather than a user.'),
  automated: z.boolean().describe('Applied automatically during payment processing.'),
  ledger_account_id: z.string(),
  ledger_account: ledgerAccountSchema,
  can_delete: z.boolean().describe('False for system adjustments: they can only be deactivated.'),
  ...timestampsShape,
})
  .meta({ id: 'Adjustment' });
