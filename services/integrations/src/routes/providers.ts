import { z } from 'zod';
import { NotFoundError, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { findProvider, listProviders } from '../domain/providers.js';
import { providerCategorySchema, providerSchema } from './schemas.js';

const MAX_PAGE = 100;

const NOT_ENABLED_NOTE =
  'No provider has a working adapter yet, so `is_enabled` is false for every provider, and so are the adapter ' +
  'capability flags (`is_webhooks_supported`, `is_manual_sync_supported`, `cash_app_features`); they are turned ' +
  'on provider by provider as adapters land.';

export const providerRoutes = [
  route({
    method: 'get',
    path: '/v2/integrations/providers',
    operationId: 'listProviders',
    summary: 'List integration providers',
    description: `The kinds of external system a connection can point at, in catalogue order, optionally only those of one category. ${NOT_ENABLED_NOTE}`,
    tags: ['Integrations'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      category: providerCategorySchema.optional().describe('Only providers of this category.'),
    }),
    response: pageEnvelopeSchema(providerSchema),
    handler: async ({ query }) => {
      const page = pageRequest(query, MAX_PAGE);
      const all = listProviders({ category: query.category });
      return pageOf(all.slice(page.offset, page.offset + page.pageSize), all.length, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/integrations/providers/{name}',
    operationId: 'getProvider',
    summary: 'Get an integration provider',
    description: `The provider descriptor; an unknown name gives 404. ${NOT_ENABLED_NOTE}`,
    tags: ['Integrations'],
    params: z.object({ name: z.string() }),
    response: providerSchema,
    errors: [404],
    handler: async ({ params }) => {
      const provider = findProvider(params.name);
      if (!provider) throw new NotFoundError(`No integration provider named ${params.name}.`);
      return provider;
    },
  }),
];
