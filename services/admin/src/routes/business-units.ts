/** Routes of business units (spec 2.16): list the accessible ones, create, read. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { businessUnitOrThrow, businessUnitsOf, createBusinessUnit } from '../domain/business-units.js';
import { businessUnitView } from '../views/business-units.js';
import { businessUnitSchema } from './schemas.js';

const MAX_PAGE = 500;

export const businessUnitRoutes = [
  route({
    method: 'get',
    path: '/v2/business-units',
    operationId: 'listBusinessUnits',
    summary: 'List business units',
    description: 'Only the units the caller may access: all of them for organization admins, the assigned ones for members.',
    tags: ['Organization'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(businessUnitSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await businessUnitsOf(deps, identity, page);
      return pageOf(rows.map(businessUnitView), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/business-units',
    operationId: 'createBusinessUnit',
    summary: 'Create a business unit',
    description: 'Names are unique per organization (case-insensitive); a duplicate gives 409.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: z.object({
      name: z.string().trim().min(1).max(256),
      description: z.string().max(2000).nullable().optional(),
    }),
    response: businessUnitSchema,
    errors: [409],
    handler: async ({ body, identity, deps }) => businessUnitView(await createBusinessUnit(deps, identity.org, body)),
  }),
  route({
    method: 'get',
    path: '/v2/business-units/{business_unit_id}',
    operationId: 'getBusinessUnit',
    summary: 'Get a business unit',
    description: 'A unit the caller may not access, or of another organization, is indistinguishable from a missing one (404).',
    tags: ['Organization'],
    params: z.object({ business_unit_id: idSchema() }),
    response: businessUnitSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => businessUnitView(await businessUnitOrThrow(deps, identity, params.business_unit_id)),
  }),
];
