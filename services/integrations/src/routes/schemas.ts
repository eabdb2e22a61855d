import { z } from 'zod';
import { AUTH_TYPES, PROVIDER_CATEGORIES } from '../domain/providers.js';
import { HEALTH_STATUS_CODES } from '../domain/health.js';

export const providerCategorySchema = z.enum(PROVIDER_CATEGORIES);

export const providerSchema = z.strictObject({
  object: z.literal('provider'),
  name: z.string().describe('Stable identifier; the `provider_name` of connections.'),
  display_name: z.string(),
  color: z.string().describe('Brand colour, #RRGGBB.'),
  connection_guide_url: z.string(),
  documentation_url: z.string(),
  description: z.string(),
  short_description: z.string(),
  logo: z.string().describe('Wide logo as an SVG data URI.'),
  logo_square: z.string().describe('Square logo as an SVG data URI.'),
  website: z.string().nullable(),
  categories: z.array(providerCategorySchema),
  auth_type: z.enum(AUTH_TYPES),
  is_api_connection: z.boolean().describe('The platform calls the provider\'s API (false: the provider pushes to the platform).'),
  is_webhooks_supported: z.boolean().describe('The platform\'s adapter receives the provider\'s webhooks.'),
  is_enabled: z.boolean().describe('A working adapter exists and connections to this provider can be created.'),
  is_manual_sync_supported: z.boolean().describe('The platform\'s adapter can run a sync on request.'),
  connection_instructions: z.array(z.string()),
  required_settings: z.array(z.string()).describe('Settings a connection to this provider must have before it can sync.'),
  cash_app_features: z.strictObject({
    can_unpost_payment: z.boolean().default(false),
    can_post_on_account_payment: z.boolean().default(false),
  }),
});

export const healthSchema = z.strictObject({
  healthy: z.boolean(),
  authentication_required: z.boolean(),
  status_code: z.enum(HEALTH_STATUS_CODES),
  message: z.string(),
  suggested_resolution: z.string(),
  timestamp: z.string().describe('ISO 8601 UTC: when the check ran'),
});

export const syncRunSchema = z.object({
  object: z.literal('sync_run'),
  id: z.string(),
  connection_id: z.string(),
  model_id: z.string(),
  model_name: z.string(),
  entity_id: z.string().nullable(),
  file_id: z.string().nullable(),
  status: z.enum(['scheduled', 'running', 'completed', 'failed', 'cancelled']),
  attempt: z.number().int(),
  batch_id: z.string().describe('UUID shared by the runs of one sync'),
  is_initial_sync: z.boolean(),
  is_one_off: z.boolean(),
  pagination_state: z.record(z.string(), z.unknown()).nullable(),
  records_synced: z.number().int(),
  timerange_start: z.string().nullable(),
  timerange_end: z.string().nullable(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  modified_at: z.string(),
});

export const connectionModelSchema = z.strictObject({
  object: z.literal('connection_model'),
  id: z.string(),
  name: z.string().describe('Unified model: customers, invoices, credit_memos.'),
  display_name: z.string(),
  connection_id: z.string(),
  is_read_enabled: z.boolean(),
  is_write_enabled: z.boolean(),
  is_custom_object: z.boolean(),
  is_file_upload_enabled: z.boolean(),
  is_webhooks_setup: z.boolean(),
  is_read_supported: z.boolean(),
  is_write_supported: z.boolean(),
  is_sync_supported: z.boolean(),
  next_sync_at: z.string().nullable(),
  last_sync: syncRunSchema.nullable().describe('The latest sync run of this model; null before the first.'),
  created_at: z.string(),
  modified_at: z.string(),
});

export const connectionSchema = z
  .object({
    object: z.literal('connection'),
    id: z.string(),
    provider_name: z.string().describe('Discriminator: the provider this connection points at.'),
    provider: providerSchema,
    name: z.string(),
    owner_id: z.string().nullable().describe('The user who created the connection.'),
    business_unit_id: z.string().nullable(),
    is_authentication_pending: z.boolean(),
    is_running_setup: z.boolean().describe('Always false: no provider adapter has a setup phase.'),
    is_sync_disabled: z.boolean(),
    requires_setup: z.boolean().describe('A required setting is missing or authentication is pending.'),
    is_configured: z.boolean().describe('Every required setting of the provider is present.'),
    missing_settings: z.array(z.string()).describe('The provider\'s required_settings that are not set.'),
    health: healthSchema,
    is_healthy: z.boolean(),
    models: z.array(connectionModelSchema),
    next_sync_at: z.string().nullable().describe('Next scheduled sync; null when the provider is not synced, sync is disabled or authentication is pending.'),
    linked_integration_id: z.string().nullable().describe('Reserved; null on this platform.'),
    authorization_url: z
      .string()
      .nullable()
      .describe('OAuth providers: the provider\'s consent URL with client_id, redirect_uri, scope, response_type=code and a signed state. Null otherwise, or when no OAuth client is configured.'),
    base_url: z.string().nullable().optional().describe('Acumatica (and other instance-based providers): the instance URL.'),
    tenant: z.string().nullable().optional(),
    endpoint_name: z.string().nullable().optional(),
    endpoint_version: z.string().nullable().optional(),
    scope: z.string().nullable().optional(),
    branches: z.array(z.string()).nullable().optional(),
    default_currency: z.string().nullable().optional(),
    created_at: z.string(),
    modified_at: z.string(),
  })
  .catchall(z.unknown())
  .describe("A connection. The provider's settings are returned flattened as top-level fields (Acumatica: base_url, tenant, endpoint_name, endpoint_version, scope, branches, default_currency; QuickBooks Online: realm_id; …), null when unset.");
