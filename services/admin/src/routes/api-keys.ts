/** Routes of the organization's API keys: list, create (the key answered once), revoke. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { apiKeysOf, createApiKey, revokeApiKey } from '../domain/api-keys.js';
import { credentialView } from '../views/credentials.js';
import { apiKeySchema } from './schemas.js';

const MAX_PAGE = 500;

export const apiKeyRoutes = [
  route({
    method: 'get',
    path: '/v2/api-keys',
    operationId: 'listApiKeys',
    summary: 'List the organization\'s API keys',
    description: 'Keys are never shown again after creation; `token_hint` tells them apart.',
    tags: ['Credentials'],
    auth: { role: 'admin' },
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(apiKeySchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { rows, total } = await apiKeysOf(deps, identity.org, page);
      return pageOf(rows.map((r) => credentialView(r) as z.input<typeof apiKeySchema>), total, page);
    },
  }),
  route({
    method: 'post',
    path: '/v2/api-keys',
    operationId: 'createApiKey',
    summary: 'Create an organization API key',
    description:
      'API keys authenticate integration middleware (the push endpoints resolve the organization from the key). ' +
      'The key is in `token` of this response only; only its SHA-256 hash is stored.',
    tags: ['Credentials'],
    auth: { role: 'admin' },
    body: z.object({
      name: z.string().trim().min(1).max(256),
      expires_at: z.iso.datetime({ offset: true }).nullable().optional().describe('Optional expiry (ISO 8601); must be in the future.'),
    }),
    response: apiKeySchema,
    handler: async ({ body, identity, deps }) => {
      const { row, token } = await createApiKey(deps, identity, body);
      return credentialView(row, token) as z.input<typeof apiKeySchema>;
    },
  }),
  route({
    method: 'delete',
    path: '/v2/api-keys/{api_key_id}',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description: 'Revocation reaches every gateway within moments (Postgres NOTIFY invalidates its credential cache). Answers 200 with the revoked key; revoking it again is harmless.',
    tags: ['Credentials'],
    auth: { role: 'admin' },
    params: z.object({ api_key_id: idSchema() }),
    response: apiKeySchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => credentialView(await revokeApiKey(deps, identity.org, params.api_key_id)) as z.input<typeof apiKeySchema>,
  }),
];
