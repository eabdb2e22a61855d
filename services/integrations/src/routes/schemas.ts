/**
 * Response schemas shared by the integrations routes (provider, connection, connection model, sync run).
 */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';
import { AUTH_TYPES, PROVIDER_CATEGORIES } from '../domain/providers.js';
import { HEALTH_STATUS_CODES, SYNC_RUN_STATUSES } from '../types.js';

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
})
  .meta({ id: 'Provider' });

export const healthSchema = z.strictObject({
  healthy: z.boolean(),
  authentication_required: z.boolean(),
  status_code: z.enum(HEALTH_STATUS_CODES),
  message: z.string(),
  suggested_resolution: z.string(),
  timestamp: z.string().describe('ISO 8601 UTC: when the check ran'),
})
  .meta({ id: 'ConnectionHealth' });

export const syncRunSchema = z.strictObject({
  object: z.literal('sync_run'),
  id: z.string().describe('UUIDv7'),
  connection_id: z.string(),
  model_id: z.string().describe('The connection model this run syncs.'),
  model_name: z.string().describe('Name of that model (`customers`, `invoices`, `credit_memos`).'),
  entity_id: z.string().nullable().describe('The entity the run belongs to: the connection id.'),
  file_id: z.string().nullable().describe('Always null: no provider syncs through files yet.'),
  status: z.enum(SYNC_RUN_STATUSES).describe(
    '`scheduled` (created, waiting for its turn) → `running` (pages are being fetched) → `completed`, `failed` (see `error`) or `cancelled` (the sync was cancelled).',
  ),
  attempt: z.number().int().describe('The attempt of the page activity that last ran this run (0 while scheduled; 2 after one retry).'),
  batch_id: z.string().describe('Shared by the runs of one sync (UUID).'),
  is_initial_sync: z.boolean().describe('The model had never synced: everything up to `timerange_end` is read.'),
  is_one_off: z.boolean().describe('Requested through POST .../sync rather than by the schedule.'),
  pagination_state: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe(
      'Where the next page starts. QuickBooks Online: `mode` (`full` or `incremental`), `phase` (`changes` = the change-data-capture ' +
      'step for deletions, then `query`), `since` (LastUpdatedTime of the last record read), `seen` (Ids already read at exactly ' +
      'that time), `max_results`, and while a crowded second is read by Id `after_id` / then `strict`; `done: true` after the last ' +
      'page. Committed with each page, so a retried run resumes there.',
    ),
  records_synced: z.number().int().describe('Records this run wrote to the ledger, deletions it applied included.'),
  timerange_start: z.string().nullable().describe('Records changed at or after this time are read; null for an initial sync.'),
  timerange_end: z
    .string()
    .nullable()
    .describe('The start of the sync; the next sync starts here. QuickBooks Online reads up to the moment it reads, so records changed during the sync are read too (and again next time).'),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable().describe('When the run completed, failed or was cancelled.'),
  error: z.string().nullable().describe('Why the run failed.'),
  ...timestampsShape,
})
  .meta({ id: 'SyncRun' });

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
})
  .meta({ id: 'ConnectionModel' });

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
  .describe("A connection. The provider's settings are returned flattened as top-level fields (Acumatica: base_url, tenant, endpoint_name, endpoint_version, scope, branches, default_currency; QuickBooks Online: realm_id; …), null when unset.")
  .meta({ id: 'Connection' });

/**
 * The invoice (a ledger document) as the invoice events carry it. No route returns an invoice on
 * its own; this is the document as the push and the syncs stored it (the push result's `service_id`
 * is its `id`).
 */
export const invoiceSchema = z
  .strictObject({
    object: z.literal('invoice'),
    id: z.string().describe('UUIDv7; the push result\'s `service_id`.'),
    kind: z.enum(['invoice', 'credit_memo']).describe('`credit_memo` for a document pushed with `debit_credit_indicator` H (or a synced credit memo): credit memos are reported by the same `invoice.*` events.'),
    origin: z.string().describe('Where it comes from: `middleware` (the push endpoints) or `connection:<connection_id>` (a pull sync).'),
    remote_id: z.string().nullable().describe('Its id in the source system (the synced record\'s id; the document number for a push).'),
    company_code: z.string(),
    fiscal_year: z.string(),
    document_number: z.string(),
    customer_code: z.string().nullable().describe('The customer\'s code in the source system.'),
    partner_id: z.string().nullable().describe('The partner (customer) it is linked to; null until that customer arrives.'),
    business_unit_id: z.string().nullable(),
    currency: z.string().describe('ISO 4217 code.'),
    document_type: z.string().nullable(),
    invoice_doc_type: z.string().nullable(),
    exchange_rate: z.string().nullable(),
    reference: z.string().nullable(),
    assignment: z.string().nullable(),
    text: z.string().nullable(),
    reason_code: z.string().nullable(),
    clearing_document_number: z.string().nullable(),
    document_date: z.string().nullable().describe('YYYY-MM-DD'),
    net_due_date: z.string().nullable().describe('YYYY-MM-DD'),
    posting_date: z.string().nullable().describe('YYYY-MM-DD'),
    clearing_date: z.string().nullable().describe('YYYY-MM-DD'),
    amount_in_document_currency: z.string().describe('Exact decimal string with the currency\'s ISO minor units ("1190.50" EUR, "1000" JPY).'),
    amount_in_local_currency: z.string().nullable().describe('In the organization\'s base currency; exact decimal string without trailing zeros.'),
    amount_open: z.string().describe('What is still open, as `amount_in_document_currency`; "0.00" once closed.'),
    status_open: z.boolean().describe('Open AR. `invoice.closed` is recorded when this turns from true to false.'),
    remote_deleted_at: z.string().nullable().describe('When the source reported the document deleted (ISO 8601 UTC); it is then closed. Null otherwise.'),
    discount_terms: z.array(z.strictObject({ due_date: z.string(), percent: z.string() })).describe('Early-payment discounts, earliest first.'),
    line_items: z
      .array(
        z.strictObject({
          line_number: z.number().int(),
          description: z.string().nullable(),
          quantity: z.string().nullable().describe('Exact decimal string.'),
          unit_amount: z.string().nullable().describe('Exact decimal string.'),
          total_amount: z.string().nullable().describe('Exact decimal string with the currency\'s minor units.'),
        }),
      )
      .describe('By line number.'),
    created_at: z.string().describe('ISO 8601 UTC'),
    modified_at: z.string().describe('ISO 8601 UTC: the last write by a push or sync (also one that changed nothing).'),
  })
  .meta({
    id: 'Invoice',
    description:
      'An invoice or credit memo of the AR ledger as the `invoice.*` events carry it. No route returns a single invoice; this is the document as the middleware push ' +
      '(POST /v2/integrations/providers/middleware/invoices, whose result\'s `service_id` is its `id`) or a connection sync stored it.',
  });
