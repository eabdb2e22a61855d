/** Routes of the organization's mailbox settings (spec 2.19): read and replace. v2. */
import { z } from 'zod';
import { timestampsShape } from '@rp/platform';
import { route } from '../deps.js';
import { readMailboxSettings, saveMailboxSettings, TRANSPORT_PROVIDERS } from '../domain/mailbox-settings.js';
import { hostnameSchema } from '../domain/hostnames.js';
import { mailboxSettingsView } from '../views/mailbox-settings.js';

const GUID_PATTERN = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const guid = () => z.string().regex(GUID_PATTERN, 'must be a GUID (8-4-4-4-12 hexadecimal digits)').nullable().default(null);
const scopes = () =>
  z
    .array(z.string().min(1).max(256).regex(/^[\x21-\x7E]+$/, 'must be a scope name: printable ASCII without spaces (e.g. Mail.Read)'))
    .max(100)
    .default([])
    .describe('Scope names (strings without spaces); duplicates are dropped.');

/** Fields the platform sets: named in a 422 when a client sends them. */
const READ_ONLY: Record<string, string> = {
  admin_consented_at: 'is set by the platform when admin_consented becomes true; leave it out',
  effective_inbound_hostname: 'is derived by the platform; leave it out',
  has_api_key: 'is answered by the platform; send api_key to set or remove the key',
};

/** A strict object whose unknown-key error names the read-only fields with their reason. */
function strict<T extends z.ZodRawShape>(shape: T) {
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      return issue.keys.map((k) => (READ_ONLY[k] ? `${k} ${READ_ONLY[k]}` : `unknown field ${k}`)).join('; ');
    },
  });
}

const transportSchema = z
  .enum(TRANSPORT_PROVIDERS)
  .describe(
    '`oauth_sync`: the OAuth sync-and-send transport (the organization\'s Microsoft 365 or Google Workspace mailboxes, synced and sent ' +
      'through with OAuth; needs microsoft.enabled or google.enabled). `domain_send`: the domain-send transport (the platform sends from ' +
      'the organization\'s own domain through an email-sending API authenticated by the domain-send API key, and receives replies on the ' +
      'inbound-parse host; needs domain_send.domain_name and a key).',
  );

const microsoftOut = z.object({
  enabled: z.boolean(),
  admin_consented: z.boolean(),
  admin_consented_at: z.string().nullable().describe('Set by the platform when admin_consented turns true (ISO 8601 UTC); null while not consented.'),
  application_scopes: z.array(z.string()),
  delegated_scopes: z.array(z.string()),
  azure_tenant_id: z.string().nullable(),
  azure_client_id: z.string().nullable(),
  is_byo: z.boolean(),
  uses_legacy_entra_app: z.boolean(),
});

const centralizedInboxOut = z.object({
  auto_assign: z.boolean(),
  auto_assign_threshold: z.number().int().min(0).max(100),
  matching_guidelines: z.string().nullable(),
});

export const mailboxSettingsSchema = z
  .object({
    object: z.literal('mailbox_settings'),
    transport_provider: transportSchema,
    hybrid_mode_enabled: z.boolean(),
    microsoft: microsoftOut,
    google: z.object({ enabled: z.boolean() }),
    centralized_inbox: centralizedInboxOut,
    domain_send: z
      .object({
        domain_name: z.string().nullable(),
        inbound_parse_hostname: z.string().nullable(),
        effective_inbound_hostname: z.string().describe('inbound_parse_hostname when set, else the platform default `<organization id>.<MAIL_INBOUND_DOMAIN>`.'),
        has_api_key: z.boolean().describe('Whether a domain-send API key is stored. The key itself is never returned.'),
      })
      .describe('The domain-send transport block.'),
    ...timestampsShape,
  })
  .meta({ id: 'MailboxSettings' });

const mailboxSettingsInput = strict({
  transport_provider: transportSchema,
  hybrid_mode_enabled: z
    .boolean()
    .default(false)
    .describe('OAuth mailbox sync (transport_provider oauth_sync) with outbound mail sent through the domain-send transport: needs both configured.'),
  microsoft: strict({
    enabled: z.boolean().default(false),
    admin_consented: z.boolean().default(false).describe('Whether a Microsoft tenant admin granted consent; the platform stamps admin_consented_at when this turns true.'),
    application_scopes: scopes(),
    delegated_scopes: scopes(),
    azure_tenant_id: guid().describe('Azure (Entra) tenant id, a GUID; required when enabled.'),
    azure_client_id: guid().describe('Entra application (client) id, a GUID; required when is_byo.'),
    is_byo: z.boolean().default(false).describe('The organization brings its own Entra application.'),
    uses_legacy_entra_app: z.boolean().default(false),
  })
    .default({ enabled: false, admin_consented: false, application_scopes: [], delegated_scopes: [], azure_tenant_id: null, azure_client_id: null, is_byo: false, uses_legacy_entra_app: false })
    .describe('Microsoft 365 block. admin_consented_at is read-only (422 when sent).'),
  google: strict({ enabled: z.boolean().default(false) }).default({ enabled: false }),
  centralized_inbox: strict({
    auto_assign: z.boolean().default(false),
    auto_assign_threshold: z.number().int().min(0).max(100).default(80).describe('Confidence (0..100) from which an incoming email is assigned automatically.'),
    matching_guidelines: z.string().trim().max(10_000).nullable().default(null),
  }).default({ auto_assign: false, auto_assign_threshold: 80, matching_guidelines: null }),
  domain_send: strict({
    domain_name: hostnameSchema().nullable().default(null).describe('The organization\'s sending domain; required for domain_send and hybrid mode.'),
    inbound_parse_hostname: hostnameSchema()
      .nullable()
      .default(null)
      .describe('Custom host receiving replies (one organization per host: 409 when taken; not under the platform\'s MAIL_INBOUND_DOMAIN). null: the platform default.'),
    api_key: z
      .string()
      .min(8, 'must be an API key of 8 to 1024 printable ASCII characters')
      .max(1024, 'must be an API key of 8 to 1024 printable ASCII characters')
      .regex(/^[\x21-\x7E]+$/, 'must be an API key of 8 to 1024 printable ASCII characters')
      .nullable()
      .optional()
      .describe('Write-only. Omitted: the stored key is kept. null: the stored key is removed. A string: replaces it (stored encrypted, never returned or logged).'),
  })
    .default({ domain_name: null, inbound_parse_hostname: null })
    .describe('The domain-send transport block. effective_inbound_hostname and has_api_key are read-only (422 when sent).'),
});

export const mailboxSettingsRoutes = [
  route({
    method: 'get',
    path: '/v2/mailbox-settings',
    operationId: 'getMailboxSettings',
    summary: 'The organization\'s mailbox settings, or null',
    description:
      'JSON `null` (status 200) until an admin configured them, then the settings. The domain-send API key is never returned: ' +
      '`domain_send.has_api_key` says whether one is stored. Any user of the organization may read them.',
    tags: ['Organization'],
    response: mailboxSettingsSchema.nullable(),
    handler: async ({ identity, deps }) => {
      const row = await readMailboxSettings(deps, identity.org);
      return row ? mailboxSettingsView(row, deps.config.MAIL_INBOUND_DOMAIN) : null;
    },
  }),
  route({
    method: 'put',
    path: '/v2/mailbox-settings',
    operationId: 'putMailboxSettings',
    summary: 'Configure the organization\'s mailbox settings',
    description:
      'Admins only. Replaces the settings as a whole: blocks and fields left out take their defaults, except the domain-send API key, ' +
      'which changes only when `domain_send.api_key` is present (`null` removes it; omitted keeps the stored key). The key is stored ' +
      'AES-256-GCM-encrypted with the platform secrets key and answered only as `has_api_key`. Read-only fields (`admin_consented_at`, ' +
      '`effective_inbound_hostname`, `has_api_key`) are refused with 422: `admin_consented_at` is stamped by the platform when ' +
      '`microsoft.admin_consented` turns true, kept while it stays true and cleared when it turns false. Rules between fields, each a 422 ' +
      'naming its field: `domain_send` (and hybrid mode) need `domain_send.domain_name` and a key (given or stored); `oauth_sync` (and hybrid ' +
      'mode) need `microsoft.enabled` or `google.enabled`; hybrid mode needs `oauth_sync`; an enabled Microsoft block needs ' +
      '`azure_tenant_id`, `is_byo` needs `azure_client_id`; a custom inbound host may not lie under the platform\'s inbound domain. A custom ' +
      'inbound host already used by another organization is 409. Host names are stored in lower case.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    body: mailboxSettingsInput,
    response: mailboxSettingsSchema,
    errors: [409],
    handler: async ({ body, identity, deps, log }) =>
      mailboxSettingsView(await saveMailboxSettings(deps, { org: identity.org, sub: identity.sub ?? null }, body, log), deps.config.MAIL_INBOUND_DOMAIN),
  }),
];
