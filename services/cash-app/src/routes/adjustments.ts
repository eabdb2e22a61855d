import { z } from 'zod';
import { isUuid, NotFoundError, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { ensureSystemAdjustments } from '../domain/system-adjustments.js';
import { adjustmentView, getAdjustment, listAdjustments } from '../store/adjustments.js';
import { adjustmentSchema } from './schemas.js';

const MAX_PAGE = 500;

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
      await ensureSystemAdjustments(deps.db, identity.org);
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await listAdjustments(deps.db, identity.org, { isActive: query.is_active }, page.offset, page.pageSize);
      return pageOf(rows.map(adjustmentView), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/adjustments/{adjustment_id}',
    operationId: 'getAdjustment',
    summary: 'Get an adjustment',
    description: 'The adjustment with its ledger account. An unknown id, or another organization\'s, gives 404.',
    tags: ['Cash application'],
    params: z.object({ adjustment_id: z.string() }),
    response: adjustmentSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => {
      await ensureSystemAdjustments(deps.db, identity.org);
      const row = isUuid(params.adjustment_id) ? await getAdjustment(deps.db, identity.org, params.adjustment_id) : undefined;
      if (!row) throw new NotFoundError(`No adjustment ${params.adjustment_id}.`);
      return adjustmentView(row);
    },
  }),
];
