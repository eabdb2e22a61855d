/**
 * The provider registry read endpoints (spec 2.2 "Provider descriptor").
 */
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
  'health reports `unsupported_provider` and nothing syncs. No adapter receives webhooks (`is_webhooks_supported` is false ' +
  'everywhere). `cash_app_features` says what posting applied cash back to the ERP can do: `quickbooks_online` posts ' +
  'Payments (on account too) and deletes them on unpost (both true); `middleware` pulls a posting queue that carries the ' +
  'unallocated amount for on-account posting (`can_post_on_account_payment` true) but cannot take a posting back ' +
  '(`can_unpost_payment` false); every other provider has no posting (both false).';

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
    params: z.object({ name: z.string().max(100).describe('The provider\'s `name` (at most 100 characters; provider names are short identifiers).') }),
    response: providerSchema,
    errors: [404],
    handler: async ({ params }) => {
      const provider = findProvider(params.name);
      if (!provider) throw new NotFoundError(`No integration provider named ${params.name}.`);
      return provider;
    },
  }),
];
