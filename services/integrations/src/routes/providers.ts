import { z } from 'zod';
import { NotFoundError, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { findProvider, listProviders } from '../domain/providers.js';
import { providerCategorySchema, providerSchema } from './schemas.js';

const MAX_PAGE = 100;

const NOT_ENABLED_NOTE =
  '`is_enabled` is true exactly for the providers with a working adapter on this platform: `middleware` (records pushed to ' +
  'the middleware push endpoints) and `quickbooks_online` (pulled on a schedule and on demand, so also ' +
  '`is_manual_sync_supported`). Every other provider says `is_enabled: false`: a connection to it may be created, but its ' +
  'health reports `unsupported_provider` and nothing syncs. No adapter receives webhooks or posts payments yet, so ' +
  '`is_webhooks_supported` and `cash_app_features` are false everywhere.';

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
