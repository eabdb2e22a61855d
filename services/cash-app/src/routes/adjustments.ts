/** The adjustment and ledger-account routes (/v2/adjustments…): validation, one domain call, the view. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import {
  adjustmentOf,
  adjustmentPage,
  createAdjustment,
  createLedgerAccount,
  deleteAdjustment,
  ledgerAccountPage,
  updateAdjustment,
} from '../domain/adjustments.js';
import { LEDGER_CLASSIFICATIONS } from '../domain-types/adjustments.js';
import { adjustmentView, ledgerAccountView } from '../views/adjustments.js';
import { adjustmentSchema, ledgerAccountSchema } from './schemas.js';

const MAX_PAGE = 500;

const name = z.string().trim().min(1).max(200);
const description = z.string().max(2000).nullable();
const ledgerAccountInput = z.object({
  name: z.string().trim().min(1).max(200),
  number: z.string().trim().min(1).max(50).describe('Account number in the organization\'s chart of accounts; unique per organization.'),
  classification: z.enum(LEDGER_CLASSIFICATIONS).default('expense'),
});

const createBody = z
  .object({
    name,
    description: description.optional(),
    is_active: z.boolean().default(true),
    automated: z.boolean().default(false).describe('Applied automatically during payment processing.'),
    ledger_account_id: idSchema().optional().describe('An existing ledger account of the organization.'),
    ledger_account: ledgerAccountInput.optional().describe('A new ledger account created with the adjustment (instead of ledger_account_id).'),
  })
  .superRefine((b, ctx) => {
    if ((b.ledger_account_id === undefined) === (b.ledger_account === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['ledger_account_id'], message: 'Give exactly one of ledger_account_id and ledger_account.' });
    }
  })
  .meta({ oneOf: [{ required: ['ledger_account_id'] }, { required: ['ledger_account'] }] });

const patchBody = z.object({
  name: name.optional(),
  description: description.optional(),
  is_active: z.boolean().optional(),
  automated: z.boolean().optional(),
  ledger_account_id: idSchema().optional(),
});

const idParams = z.object({ adjustment_id: idSchema() });

export const adjustmentRoutes = [
  route({
    method: 'get',
    path: '/v2/adjustments',
    operationId: 'listAdjustments',
    summary: 'List adjustments',
    description:
      'Adjustments (fees, discounts, write-offs) applied while allocating payments, ordered by name. Every ' +
      'organization has the system adjustments (bank fee, early-payment discount, short-pay write-off, FX ' +
      'difference), created with their ledger accounts on its first access.',
    tags: ['Cash application'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      is_active: z
        .enum(['true', 'false'])
        .transform((v) => v === 'true')
        .optional()
        .describe('Only active (`true`) or inactive (`false`) adjustments.'),
    }),
    response: pageEnvelopeSchema(adjustmentSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await adjustmentPage(deps, identity.org, { isActive: query.is_active }, page);
      return pageOf(rows.map(adjustmentView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/adjustments/ledger-accounts',
    operationId: 'listLedgerAccounts',
    summary: 'List ledger accounts',
    description: 'The organization\'s general-ledger accounts that adjustments book to, ordered by number (the system adjustments\' accounts included).',
    tags: ['Cash application'],
    query: z.object({ ...paginationQueryShape(MAX_PAGE) }),
    response: pageEnvelopeSchema(ledgerAccountSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await ledgerAccountPage(deps, identity.org, page);
      return pageOf(rows.map(ledgerAccountView), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/adjustments/ledger-accounts',
    operationId: 'createLedgerAccount',
    summary: 'Create a ledger account',
    description: 'Adds a general-ledger account for adjustments. An account number the organization already has gives 409 `conflict`.',
    tags: ['Cash application'],
    auth: { permission: 'adjustments:write' },
    body: ledgerAccountInput,
    response: ledgerAccountSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => ledgerAccountView(await createLedgerAccount(deps, identity.org, body)),
  }),
  route({
    method: 'get',
    path: '/v2/adjustments/{adjustment_id}',
    operationId: 'getAdjustment',
    summary: 'Get an adjustment',
    description: 'The adjustment with its ledger account. An unknown id, or another organization\'s, gives 404.',
    tags: ['Cash application'],
    params: idParams,
    response: adjustmentSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => adjustmentView(await adjustmentOf(deps, identity.org, params.adjustment_id)),
  }),
  route({
    method: 'post',
    path: '/v2/adjustments',
    operationId: 'createAdjustment',
    summary: 'Create an adjustment',
    description:
      'Creates a user adjustment (`is_system` false, `can_delete` true until a payment allocation uses it). It books to an ' +
      'existing ledger account (`ledger_account_id`) or to a new one given inline (`ledger_account` {name, number, ' +
      'classification (default `expense`)}); exactly one of the two. An unknown ledger_account_id gives 422; an inline ' +
      'account number the organization already has gives 409 `conflict` (use its id instead). Answers 200 with the adjustment.',
    tags: ['Cash application'],
    auth: { permission: 'adjustments:write' },
    body: createBody,
    response: adjustmentSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) =>
      adjustmentView(await createAdjustment(deps, identity.org, { ...body, description: body.description ?? null })),
  }),
  route({
    method: 'patch',
    path: '/v2/adjustments/{adjustment_id}',
    operationId: 'updateAdjustment',
    summary: 'Update an adjustment',
    description:
      'Changes only the fields present: `name`, `description` (null clears it), `is_active`, `automated`, `ledger_account_id` ' +
      '(an account of the organization, else 422). System adjustments can be changed too; deactivating (`is_active` false) ' +
      'is how a system adjustment is retired, since it cannot be deleted.',
    tags: ['Cash application'],
    auth: { permission: 'adjustments:write' },
    params: idParams,
    body: patchBody,
    response: adjustmentSchema,
    errors: [404],
    handler: async ({ params, body, identity, deps }) => adjustmentView(await updateAdjustment(deps, identity.org, params.adjustment_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v2/adjustments/{adjustment_id}',
    operationId: 'deleteAdjustment',
    summary: 'Delete an adjustment',
    description:
      'Permanently deletes a user adjustment: 204, no body. A system adjustment cannot be deleted (409 `conflict`; deactivate it ' +
      'with PATCH `is_active: false`), nor one that a payment allocation uses (409 `conflict`). `can_delete` on the adjustment ' +
      'says whether this call would succeed. Unknown or another organization\'s id: 404.',
    tags: ['Cash application'],
    auth: { permission: 'adjustments:write' },
    params: idParams,
    errors: [404, 409],
    handler: async ({ params, identity, deps }) => {
      await deleteAdjustment(deps, identity.org, params.adjustment_id);
    },
  }),
];
