/**
 * Connections (spec 2.2 "Connection"): create, list, read, change, delete, authenticate and health-check.
 */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape } from '@rp/platform';
import { route } from '../deps.js';
import { authenticateBodySchema } from '../domain/authenticate.js';
import {
  authenticateConnection,
  checkHealth,
  connectionViewOf,
  createConnection,
  findConnection,
  listConnectionViews,
  patchConnection,
  removeConnection,
} from '../domain/connection-service.js';
import { HEALTH_STATUS_DOC } from '../domain/health.js';
import { PROVIDERS } from '../domain/providers.js';
import { connectionSchema } from './schemas.js';

const MAX_PAGE = 100;
const providerNames = PROVIDERS.map((p) => p.name) as [string, ...string[]];
const params = z.object({ connection_id: idSchema() });
const settingsBody = z
  .record(z.string().max(100), z.unknown())
  .describe(
    "The provider's settings (the keys of its `required_settings` plus optional ones, e.g. QuickBooks `realm_id`). Types are checked per " +
      'provider: URLs (`base_url`, `site_url`) http(s), lists (`branches`, `subsidiaries`, `company_codes`, …) arrays of strings, ' +
      '`default_currency` an ISO 4217 code, everything else a non-empty string (at most 1000 characters; URLs 2000; list items 200, at most 500 of them; ' +
      'setting names 100). An unknown key is refused. Null removes a setting. A value or name with a lone surrogate (an unpaired UTF-16 escape) → 422 `lone_surrogate` at body.settings.<key>.',
  );

const CONNECTION_NOTES =
  'Connections may be created for every provider of the registry, including those without an adapter (`is_enabled: false`): ' +
  'such a connection is stored honestly, its health says `unsupported_provider` and nothing syncs (POST …/sync answers 409). ' +
  'Secrets (OAuth tokens, API keys, passwords) are encrypted at rest (AES-256-GCM) and never returned. ' +
  'URL settings (`base_url`, `site_url`) must be http(s) and may not name a loopback, private, link-local or metadata address ' +
  '(422 at body.settings.<key>, `url_not_allowed`); every call to them is checked again after DNS resolution and on each redirect. ' +
  'Derived fields: `missing_settings` = required settings of the provider not set; `is_configured` = none missing; ' +
  '`requires_setup` = something missing or authentication pending; `is_healthy` = `health.healthy`. Connections to the ' +
  'push-based `middleware` provider need no authentication (`is_authentication_pending: false`). ' +
  HEALTH_STATUS_DOC;

export const connectionRoutes = [
  route({
    method: 'post',
    path: '/v2/integrations/connections',
    operationId: 'createConnection',
    summary: 'Create a connection',
    description:
      `Creates the connection and its models (the provider's synced models: QuickBooks Online customers, invoices, credit_memos). ` +
      `OAuth connections start pending and carry an \`authorization_url\`; a sync Schedule is created for providers with a pull adapter ` +
      `(paused until authenticated). \`owner_id\` is the creating user. \`business_unit_id\` is optional; it must be a business unit of the organization (422 at body.business_unit_id otherwise, also for another organization's unit). Organization admins only. An unknown provider or a setting of the wrong type gives 422. ${CONNECTION_NOTES}`,
    tags: ['Integrations'],
    auth: { role: 'admin' },
    body: z.strictObject({
      provider_name: z.enum(providerNames).describe('One of GET /v2/integrations/providers.'),
      name: z.string().trim().min(1).max(256),
      settings: settingsBody.optional(),
      business_unit_id: idSchema().nullable().optional(),
    }),
    response: connectionSchema,
    handler: async ({ body, identity, deps }) => createConnection(deps, identity, body),
  }),
  route({
    method: 'get',
    path: '/v2/integrations/connections',
    operationId: 'listConnections',
    summary: 'List connections',
    description: `The organization's connections, oldest first; for a member only those of no business unit or of one of theirs. ${CONNECTION_NOTES}`,
    tags: ['Integrations'],
    query: z.object(paginationQueryShape(MAX_PAGE)),
    response: pageEnvelopeSchema(connectionSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { data, total } = await listConnectionViews(deps, identity.org, page.offset, page.pageSize, identity.bu);
      return pageOf(data, total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/integrations/connections/{connection_id}',
    operationId: 'getConnection',
    summary: 'Get a connection',
    description: `404 for an unknown connection or one of another organization. ${CONNECTION_NOTES}`,
    tags: ['Integrations'],
    params,
    response: connectionSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => connectionViewOf(deps, await findConnection(deps, identity.org, p.connection_id)),
  }),
  route({
    method: 'patch',
    path: '/v2/integrations/connections/{connection_id}',
    operationId: 'updateConnection',
    summary: 'Update a connection',
    description:
      'Only the fields present change. `settings` is merged key by key (null removes a key) and then the health check runs again; ' +
      '`is_sync_disabled` pauses (true) or resumes (false) the sync Schedule. Organization admins only.',
    tags: ['Integrations'],
    auth: { role: 'admin' },
    params,
    body: z.strictObject({
      name: z.string().trim().min(1).max(256).optional(),
      settings: settingsBody.optional(),
      is_sync_disabled: z.boolean().optional(),
    }),
    response: connectionSchema,
    errors: [404],
    handler: async ({ params: p, body, identity, deps }) => patchConnection(deps, identity.org, p.connection_id, body),
  }),
  route({
    method: 'delete',
    path: '/v2/integrations/connections/{connection_id}',
    operationId: 'deleteConnection',
    summary: 'Delete a connection',
    description:
      'Removes the sync Schedule, cancels a sync in flight (waiting for it to close), then the connection, its models, sync runs and stored secrets; 204 without a body. Ledger records it ' +
      'synced stay. Organization admins only.',
    tags: ['Integrations'],
    auth: { role: 'admin' },
    params,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => removeConnection(deps, identity.org, p.connection_id),
  }),
  route({
    method: 'post',
    path: '/v2/integrations/connections/{connection_id}/authenticate',
    operationId: 'authenticateConnection',
    summary: 'Authenticate a connection',
    description:
      'One of four variants chosen by `provider_name`, which must be the connection\'s provider (otherwise 422 at body.provider_name): ' +
      '`quickbooks_online` and `xero` (OAuth 2.0 authorization code with PKCE: the `state` is optional and may be null (spec 4.3.1); when sent it must be the signed state of the ' +
      'connection\'s current `authorization_url`, unexpired and unused, otherwise 422 at body.state; without it the PKCE verifier of that URL binds the code; the code is exchanged at the ' +
      'provider\'s registered token endpoint (configured, never a tenant-chosen host) and the tokens stored encrypted; QuickBooks also needs extra_data.realm_id), `stripe` (api_key) and ' +
      '`jira_service_management` (username + API token as password; checked against {site_url}/rest/api/3/myself). ' +
      'On success `is_authentication_pending` is cleared (API-key and basic credentials only when the provider accepted them), a health ' +
      'check runs and the connection is returned. The provider refusing the code or the credentials gives 422 `authentication-refused` ' +
      'naming the provider\'s error, the connection unchanged and still pending; a token endpoint that cannot be reached or fails gives ' +
      '502; no OAuth client configured for the provider gives 409. Organization admins only.',
    tags: ['Integrations'],
    auth: { role: 'admin' },
    params,
    body: authenticateBodySchema,
    response: connectionSchema,
    errors: [404, 409, 502],
    handler: async ({ params: p, body, identity, deps }) => authenticateConnection(deps, identity.org, p.connection_id, body),
  }),
  route({
    method: 'post',
    path: '/v2/integrations/connections/{connection_id}/health-check',
    operationId: 'checkConnectionHealth',
    summary: 'Run a health check',
    description:
      'Runs one health check now (a real authenticated call to the provider where an adapter or credential check exists; OAuth tokens ' +
      'are refreshed first when they expire within 5 minutes), stores it as the connection\'s `health` and returns the connection. A ' +
      'check that verifies the credentials also clears a pending authentication. A check whose `status_code` differs from the stored one records ' +
      '`connection.health_changed` (the connection as returned here, `previous_attributes` with the earlier `health` and `is_healthy`); the same status again records nothing. ' +
      HEALTH_STATUS_DOC,
    tags: ['Integrations'],
    params,
    response: connectionSchema,
    errors: [404],
    handler: async ({ params: p, identity, deps }) => checkHealth(deps, identity.org, p.connection_id, identity.bu),
  }),
];
