/**
 * What connections need from a provider beyond its public descriptor: OAuth endpoints and scopes,
 * the API base URL, the models the adapter syncs, the sync interval, the types of its settings and
 * how its credentials are checked. Internal: none of this is in an API response (the OAuth
 * endpoints surface only inside a connection's `authorization_url`).
 *
 * URLs are the providers' documented production endpoints; `PROVIDER_URL_OVERRIDES` replaces them
 * for sandboxes and tests (see `providerUrls`).
 */
import type { IntegrationsConfig } from '../config.js';
import { findProvider, PULL_ADAPTER_PROVIDERS, PUSH_ADAPTER_PROVIDERS, PROVIDERS, type ProviderDescriptor } from './providers.js';

export type SettingKind = 'string' | 'url' | 'string_array' | 'currency';

/** How the platform verifies a connection's credentials with a real call (see health.ts). */
export type CredentialCheck =
  /** GET {api}/v3/company/{realm}/companyinfo/{realm}, Bearer access token (Intuit Accounting API) */
  | 'quickbooks_companyinfo'
  /** GET {api}/connections, Bearer access token (Xero: the tenants the token may access) */
  | 'xero_connections'
  /** GET {api}/v1/balance, Bearer secret key (Stripe) */
  | 'stripe_balance'
  /** GET {site_url}/rest/api/3/myself, Basic e-mail:API token (Atlassian Cloud) */
  | 'jira_myself';

export interface ProviderModel {
  name: string;
  display_name: string;
  /** the adapter reads it (pull) */
  is_read_supported: boolean;
  is_sync_supported: boolean;
}

export interface ProviderRuntime {
  descriptor: ProviderDescriptor;
  /** 'pull': synced by a Temporal Schedule; 'push': records arrive on push endpoints; null: no adapter. */
  adapter: 'pull' | 'push' | null;
  oauth: { authorize_url: string; token_url: string; scopes: string[] } | null;
  api_base_url: string | null;
  /** Interval of the connection's sync Schedule in minutes (pull adapters; read by sync-schedule.ts); null otherwise. */
  sync_interval_minutes: number | null;
  models: ProviderModel[];
  /** Every setting a connection of this provider may have, with its type (required ones included). */
  settings: Record<string, SettingKind>;
  credential_check: CredentialCheck | null;
}

const ARRAY_SETTINGS = new Set(['branches', 'subsidiaries', 'company_codes', 'legal_entities', 'business_units', 'entity_ids']);
const URL_SETTINGS = new Set(['base_url', 'site_url']);

function kindOf(setting: string): SettingKind {
  if (ARRAY_SETTINGS.has(setting)) return 'string_array';
  if (URL_SETTINGS.has(setting)) return 'url';
  if (setting === 'default_currency') return 'currency';
  return 'string';
}

const LEDGER_MODELS = [
  { name: 'customers', display_name: 'Customers' },
  { name: 'invoices', display_name: 'Invoices' },
  { name: 'credit_memos', display_name: 'Credit memos' },
];

interface Extra {
  oauth?: ProviderRuntime['oauth'];
  api_base_url?: string;
  /** optional settings beyond required_settings */
  optional_settings?: Record<string, SettingKind>;
  credential_check?: CredentialCheck;
  sync_interval_minutes?: number;
}

const EXTRAS: Record<string, Extra> = {
  quickbooks_online: {
    // https://developer.intuit.com/app/developer/qbo/docs/develop/authentication-and-authorization/oauth-2.0
    oauth: {
      authorize_url: 'https://appcenter.intuit.com/connect/oauth2',
      token_url: 'https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer',
      scopes: ['com.intuit.quickbooks.accounting'],
    },
    api_base_url: 'https://quickbooks.api.intuit.com',
    sync_interval_minutes: 60,
    // The company (realmId) arrives on the OAuth redirect and is stored by authenticate.
    optional_settings: { realm_id: 'string' },
    credential_check: 'quickbooks_companyinfo',
  },
  xero: {
    // https://developer.xero.com/documentation/guides/oauth2/auth-flow
    oauth: {
      authorize_url: 'https://login.xero.com/identity/connect/authorize',
      token_url: 'https://identity.xero.com/connect/token',
      scopes: ['offline_access', 'accounting.transactions.read', 'accounting.contacts.read'],
    },
    api_base_url: 'https://api.xero.com',
    optional_settings: { tenant_id: 'string' },
    credential_check: 'xero_connections',
  },
  acumatica: {
    // Acumatica's OAuth server lives on the instance: {base_url}/identity/connect/authorize|token.
    oauth: { authorize_url: '{base_url}/identity/connect/authorize', token_url: '{base_url}/identity/connect/token', scopes: ['api', 'offline_access'] },
  },
  netsuite: {
    oauth: {
      authorize_url: 'https://{account_id}.app.netsuite.com/app/login/oauth2/authorize.nl',
      token_url: 'https://{account_id}.suitetalk.api.netsuite.com/services/rest/auth/oauth2/v1/token',
      scopes: ['rest_webservices'],
    },
  },
  dynamics_365_business_central: {
    oauth: {
      authorize_url: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      token_url: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      scopes: ['https://api.businesscentral.dynamics.com/.default', 'offline_access'],
    },
  },
  dynamics_365_finance: {
    oauth: {
      authorize_url: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      token_url: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      scopes: ['{base_url}/.default', 'offline_access'],
    },
  },
  zendesk: {
    oauth: { authorize_url: 'https://{subdomain}.zendesk.com/oauth/authorizations/new', token_url: 'https://{subdomain}.zendesk.com/oauth/tokens', scopes: ['read', 'write'] },
  },
  salesforce: {
    oauth: {
      authorize_url: 'https://login.salesforce.com/services/oauth2/authorize',
      token_url: 'https://login.salesforce.com/services/oauth2/token',
      scopes: ['api', 'refresh_token'],
    },
  },
  hubspot: {
    oauth: { authorize_url: 'https://app.hubspot.com/oauth/authorize', token_url: 'https://api.hubapi.com/oauth/v1/token', scopes: ['crm.objects.companies.read', 'crm.objects.contacts.read'] },
  },
  stripe: { api_base_url: 'https://api.stripe.com', credential_check: 'stripe_balance' },
  jira_service_management: { credential_check: 'jira_myself' },
};

function build(descriptor: ProviderDescriptor): ProviderRuntime {
  const extra = EXTRAS[descriptor.name] ?? {};
  const adapter = PULL_ADAPTER_PROVIDERS.has(descriptor.name) ? 'pull' : PUSH_ADAPTER_PROVIDERS.has(descriptor.name) ? 'push' : null;
  const settings: Record<string, SettingKind> = {};
  for (const s of descriptor.required_settings) settings[s] = kindOf(s);
  Object.assign(settings, extra.optional_settings ?? {});
  return {
    descriptor,
    adapter,
    oauth: descriptor.auth_type === 'oauth2' ? (extra.oauth ?? null) : null,
    api_base_url: extra.api_base_url ?? null,
    sync_interval_minutes: adapter === 'pull' ? (extra.sync_interval_minutes ?? 60) : null,
    // Pull adapters read the ledger models; the middleware receives the same models by push (not
    // synced: is_read_supported/is_sync_supported false). Providers without an adapter have none.
    models:
      adapter === 'pull'
        ? LEDGER_MODELS.map((m) => ({ ...m, is_read_supported: true, is_sync_supported: true }))
        : adapter === 'push'
          ? LEDGER_MODELS.map((m) => ({ ...m, is_read_supported: false, is_sync_supported: false }))
          : [],
    settings,
    credential_check: extra.credential_check ?? null,
  };
}

const RUNTIMES = new Map(PROVIDERS.map((p) => [p.name, build(p)]));

export function providerRuntime(name: string): ProviderRuntime | undefined {
  return RUNTIMES.get(name);
}

export function requireProviderRuntime(name: string): ProviderRuntime {
  const r = RUNTIMES.get(name);
  if (!r) throw new Error(`Unknown provider ${name}`);
  return r;
}

/** Replace `{setting}` placeholders (instance-specific OAuth hosts) with the connection's settings; null when one is missing. */
function fill(template: string, settings: Record<string, unknown>): string | null {
  let missing = false;
  const out = template.replace(/\{(\w+)\}/g, (_, key: string) => {
    const v = settings[key];
    if (typeof v !== 'string' || !v) {
      missing = true;
      return '';
    }
    return key === 'base_url' ? v.replace(/\/+$/, '') : encodeURIComponent(v);
  });
  return missing ? null : out;
}

export interface ProviderUrls {
  authorize_url: string | null;
  token_url: string | null;
  api_base_url: string | null;
}

/** The provider's URLs for a connection: documented defaults, `{setting}` filled in, PROVIDER_URL_OVERRIDES applied. */
export function providerUrls(config: Pick<IntegrationsConfig, 'PROVIDER_URL_OVERRIDES'>, providerName: string, settings: Record<string, unknown> = {}): ProviderUrls {
  const r = RUNTIMES.get(providerName);
  const o = config.PROVIDER_URL_OVERRIDES[providerName] ?? {};
  const base = {
    authorize_url: r?.oauth ? fill(r.oauth.authorize_url, settings) : null,
    token_url: r?.oauth ? fill(r.oauth.token_url, settings) : null,
    api_base_url: r?.api_base_url ?? null,
  };
  return {
    authorize_url: o.authorize_url ?? base.authorize_url,
    token_url: o.token_url ?? base.token_url,
    api_base_url: (o.api_base_url ?? base.api_base_url)?.replace(/\/+$/, '') ?? null,
  };
}

const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * The token endpoint the platform's OAuth client (and its secret) may be sent to: the operator's
 * PROVIDER_URL_OVERRIDES token_url, or the provider's documented endpoint. A documented endpoint on
 * the tenant's own instance (`{base_url}`, Acumatica) is not registered: the platform's client
 * secret never goes to a host a tenant chose (an operator who runs such a client sets the override).
 * A `{setting}` inside a documented host name must be one DNS label under the provider's domain.
 */
export function registeredTokenUrl(
  config: Pick<IntegrationsConfig, 'PROVIDER_URL_OVERRIDES'>,
  providerName: string,
  settings: Record<string, unknown> = {},
): { url: string } | { url: null; reason: string } {
  const override = config.PROVIDER_URL_OVERRIDES[providerName]?.token_url;
  if (override) return { url: override };
  const template = RUNTIMES.get(providerName)?.oauth?.token_url;
  if (!template) return { url: null, reason: `${providerName} has no OAuth token endpoint` };
  const authority = /^https:\/\/([^/]+)/.exec(template)?.[1] ?? null;
  if (authority === null || authority.startsWith('{')) {
    return { url: null, reason: `the token endpoint of ${providerName} is on the tenant's own host; the platform's OAuth client is only sent to a token URL the operator registered (PROVIDER_URL_OVERRIDES)` };
  }
  for (const [, key] of authority.matchAll(/\{(\w+)\}/g)) {
    const v = settings[key];
    if (typeof v === 'string' && v && !HOST_LABEL.test(v)) return { url: null, reason: `the setting ${key} must be a single host-name label` };
  }
  const url = fill(template, settings);
  return url ? { url } : { url: null, reason: `the token endpoint of ${providerName} is not known (instance settings missing)` };
}

export function oauthScopes(providerName: string, settings: Record<string, unknown>): string {
  const r = RUNTIMES.get(providerName);
  return (r?.oauth?.scopes ?? []).map((s) => fill(s, settings) ?? s).join(' ');
}

export { findProvider };
