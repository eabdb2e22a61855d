/**
 * The provider registry: every kind of external system a connection can point at (spec 2.2,
 * "Provider descriptor"). This is reference data kept in code, not a table: it changes with the
 * adapters, which ship with the code.
 *
 * Honesty rule: the capability flags (`is_enabled`, `is_webhooks_supported`,
 * `is_manual_sync_supported`, `cash_app_features`) say what THIS platform's adapter for the provider
 * can do. Two providers have a working adapter: `middleware` (records pushed to the middleware push
 * endpoints) and `quickbooks_online` (a pull adapter synced on a Temporal Schedule, also on demand).
 * Every other provider has `is_enabled: false`: a connection to it may be created and authenticated
 * (where an authenticate variant exists), but its health says `unsupported_provider` and nothing
 * syncs. `auth_type`, `required_settings` and `connection_instructions` describe the connection
 * the adapter needs. What connections need beyond the descriptor (OAuth endpoints, API base URL,
 * models, sync interval, setting types) is in `provider-runtime.ts`, internal and not returned.
 */

export const PROVIDER_CATEGORIES = ['accounting', 'erp', 'billing', 'payments', 'banking', 'ticketing', 'crm', 'middleware'] as const;
export type ProviderCategory = (typeof PROVIDER_CATEGORIES)[number];

export const AUTH_TYPES = ['oauth2', 'api_key', 'basic', 'none'] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

export interface ProviderDescriptor {
  object: 'provider';
  name: string;
  display_name: string;
  color: string;
  connection_guide_url: string;
  documentation_url: string;
  description: string;
  short_description: string;
  logo: string;
  logo_square: string;
  website: string | null;
  categories: ProviderCategory[];
  auth_type: AuthType;
  is_api_connection: boolean;
  is_webhooks_supported: boolean;
  is_enabled: boolean;
  is_manual_sync_supported: boolean;
  connection_instructions: string[];
  required_settings: string[];
  cash_app_features: { can_unpost_payment: boolean; can_post_on_account_payment: boolean };
}

/** What each entry states; the rest of the descriptor is derived (logos) or a capability flag. */
interface ProviderEntry {
  name: string;
  display_name: string;
  color: string;
  website: string | null;
  documentation_url: string;
  connection_guide_url: string;
  short_description: string;
  description: string;
  categories: ProviderCategory[];
  auth_type: AuthType;
  /** false for systems that push to us (middleware) instead of being called. */
  is_api_connection: boolean;
  required_settings: string[];
  connection_instructions: string[];
}

const OAUTH_REDIRECT = 'Register the redirect URI shown on the connection screen with the application.';

const ENTRIES: ProviderEntry[] = [
  // ------------------------------------------------------------------ ERP
  {
    name: 'acumatica',
    display_name: 'Acumatica',
    color: '#0B4F8A',
    website: 'https://www.acumatica.com',
    documentation_url: 'https://help.acumatica.com/',
    connection_guide_url: 'https://help.acumatica.com/',
    short_description: 'Cloud ERP for mid-market companies.',
    description:
      'Acumatica Cloud ERP. Customers, invoices, credit memos and payments are read through the contract-based ' +
      'REST API of the chosen web-service endpoint; access is granted with OAuth 2.0 (authorization code).',
    categories: ['erp', 'accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['base_url', 'tenant', 'endpoint_name', 'endpoint_version', 'scope', 'branches', 'default_currency'],
    connection_instructions: [
      'In Acumatica, open Connected Applications (SM303010) and add a client using the Authorization Code flow.',
      OAUTH_REDIRECT,
      'Enter the instance base URL, the tenant name, and the web-service endpoint name and version (for example Default / 23.200.001).',
      'Set the OAuth scope (api offline_access), the branches to synchronise and the default currency.',
    ],
  },
  {
    name: 'netsuite',
    display_name: 'Oracle NetSuite',
    color: '#125580',
    website: 'https://www.netsuite.com',
    documentation_url: 'https://docs.oracle.com/en/cloud/saas/netsuite/',
    connection_guide_url: 'https://docs.oracle.com/en/cloud/saas/netsuite/',
    short_description: 'Cloud ERP suite from Oracle.',
    description: 'Oracle NetSuite. Records are read through SuiteTalk REST web services and SuiteQL; access is granted with OAuth 2.0.',
    categories: ['erp', 'accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['account_id', 'subsidiaries', 'default_currency'],
    connection_instructions: [
      'Enable OAuth 2.0 and REST Web Services under Setup > Company > Enable Features > SuiteCloud.',
      'Create an integration record with the Authorization Code Grant and the REST Web Services scope.',
      OAUTH_REDIRECT,
      'Enter your account ID (Setup > Company > Company Information) and the subsidiaries to synchronise.',
    ],
  },
  {
    name: 'sap_s4hana',
    display_name: 'SAP S/4HANA',
    color: '#0070F2',
    website: 'https://www.sap.com/products/erp/s4hana.html',
    documentation_url: 'https://api.sap.com/',
    connection_guide_url: 'https://api.sap.com/',
    short_description: 'SAP\'s ERP suite, cloud or on-premise.',
    description:
      'SAP S/4HANA. Business partners, accounting documents and open items are read through the OData APIs ' +
      'exposed by a communication arrangement, authenticated with a communication user.',
    categories: ['erp', 'accounting'],
    auth_type: 'basic',
    is_api_connection: true,
    required_settings: ['base_url', 'company_codes', 'default_currency'],
    connection_instructions: [
      'Create a communication user and a communication system for this platform.',
      'Create a communication arrangement that exposes the accounting and business-partner OData services.',
      'Enter the API base URL, the communication user\'s credentials and the company codes to synchronise.',
    ],
  },
  {
    name: 'dynamics_365_business_central',
    display_name: 'Microsoft Dynamics 365 Business Central',
    color: '#00A3A3',
    website: 'https://www.microsoft.com/dynamics-365/products/business-central',
    documentation_url: 'https://learn.microsoft.com/dynamics365/business-central/dev-itpro/api-reference/v2.0/',
    connection_guide_url: 'https://learn.microsoft.com/dynamics365/business-central/dev-itpro/api-reference/v2.0/',
    short_description: 'Microsoft\'s ERP for small and mid-sized businesses.',
    description: 'Microsoft Dynamics 365 Business Central. Records are read through the Business Central API v2.0 with a Microsoft Entra ID OAuth 2.0 grant.',
    categories: ['erp', 'accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['environment', 'company_id'],
    connection_instructions: [
      'Sign in with a Microsoft Entra ID account that may use the Business Central API.',
      'Choose the environment (for example Production) and the company to synchronise.',
    ],
  },
  {
    name: 'dynamics_365_finance',
    display_name: 'Microsoft Dynamics 365 Finance',
    color: '#002050',
    website: 'https://www.microsoft.com/dynamics-365/products/finance',
    documentation_url: 'https://learn.microsoft.com/dynamics365/fin-ops-core/dev-itpro/data-entities/odata',
    connection_guide_url: 'https://learn.microsoft.com/dynamics365/fin-ops-core/dev-itpro/data-entities/odata',
    short_description: 'Microsoft\'s ERP for large enterprises.',
    description: 'Microsoft Dynamics 365 Finance. Data entities are read through its OData endpoint with a Microsoft Entra ID application.',
    categories: ['erp', 'accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['base_url', 'legal_entities'],
    connection_instructions: [
      'Register an application in Microsoft Entra ID and add it under Microsoft Entra ID applications in Dynamics 365 Finance.',
      OAUTH_REDIRECT,
      'Enter the environment URL and the legal entities to synchronise.',
    ],
  },
  {
    name: 'oracle_fusion_cloud',
    display_name: 'Oracle Fusion Cloud ERP',
    color: '#C74634',
    website: 'https://www.oracle.com/erp/',
    documentation_url: 'https://docs.oracle.com/en/cloud/saas/financials/',
    connection_guide_url: 'https://docs.oracle.com/en/cloud/saas/financials/',
    short_description: 'Oracle\'s enterprise cloud ERP.',
    description: 'Oracle Fusion Cloud ERP. Receivables data is read through the Fusion Financials REST APIs with an integration user.',
    categories: ['erp', 'accounting'],
    auth_type: 'basic',
    is_api_connection: true,
    required_settings: ['base_url', 'business_units'],
    connection_instructions: [
      'Create an integration user with read access to Receivables.',
      'Enter the pod URL, the integration user\'s credentials and the business units to synchronise.',
    ],
  },
  {
    name: 'odoo',
    display_name: 'Odoo',
    color: '#714B67',
    website: 'https://www.odoo.com',
    documentation_url: 'https://www.odoo.com/documentation/',
    connection_guide_url: 'https://www.odoo.com/documentation/',
    short_description: 'Open-source business applications suite.',
    description: 'Odoo. Partners, invoices and payments are read through the external API of the Accounting app with a user API key.',
    categories: ['erp', 'accounting'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: ['base_url', 'database', 'username'],
    connection_instructions: [
      'In Odoo, open your user preferences, Account Security, and create an API key.',
      'Enter the instance URL, the database name, the user name and the API key.',
    ],
  },
  // ------------------------------------------------------------------ accounting
  {
    name: 'quickbooks_online',
    display_name: 'QuickBooks Online',
    color: '#2CA01C',
    website: 'https://quickbooks.intuit.com',
    documentation_url: 'https://developer.intuit.com/app/developer/qbo/docs/get-started',
    connection_guide_url: 'https://developer.intuit.com/app/developer/qbo/docs/get-started',
    short_description: 'Accounting for small businesses from Intuit.',
    description: 'Intuit QuickBooks Online. Customers, invoices, credit memos and payments are read through the Accounting API with OAuth 2.0.',
    categories: ['accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['Sign in to QuickBooks Online as an administrator and choose the company to connect.'],
  },
  {
    name: 'xero',
    display_name: 'Xero',
    color: '#13B5EA',
    website: 'https://www.xero.com',
    documentation_url: 'https://developer.xero.com/documentation/',
    connection_guide_url: 'https://developer.xero.com/documentation/',
    short_description: 'Online accounting for small businesses.',
    description: 'Xero. Contacts, invoices, credit notes and payments are read through the Xero Accounting API with OAuth 2.0.',
    categories: ['accounting'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['Sign in to Xero and choose the organisation to connect.'],
  },
  {
    name: 'sage_intacct',
    display_name: 'Sage Intacct',
    color: '#00D639',
    website: 'https://www.sage.com/en-us/sage-business-cloud/intacct/',
    documentation_url: 'https://developer.intacct.com/',
    connection_guide_url: 'https://developer.intacct.com/',
    short_description: 'Cloud financial management from Sage.',
    description: 'Sage Intacct. Accounts-receivable records are read through the Sage Intacct Web Services API with a Web Services user.',
    categories: ['accounting', 'erp'],
    auth_type: 'basic',
    is_api_connection: true,
    required_settings: ['company_id', 'entity_ids', 'sender_id'],
    connection_instructions: [
      'Authorise this platform\'s Web Services sender ID in Company > Setup > Company > Security.',
      'Create a Web Services user with read access to Accounts Receivable.',
      'Enter the company ID, the user\'s credentials and the entities to synchronise.',
    ],
  },
  // ------------------------------------------------------------------ billing and payments
  {
    name: 'stripe',
    display_name: 'Stripe',
    color: '#635BFF',
    website: 'https://stripe.com',
    documentation_url: 'https://docs.stripe.com/api',
    connection_guide_url: 'https://docs.stripe.com/keys',
    short_description: 'Online payments and billing.',
    description: 'Stripe. Customers, invoices and payments are read through the Stripe API with a restricted API key.',
    categories: ['billing', 'payments'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['In the Stripe Dashboard, create a restricted key with read access to customers, invoices, charges and payouts, and paste it here.'],
  },
  {
    name: 'chargebee',
    display_name: 'Chargebee',
    color: '#FF3300',
    website: 'https://www.chargebee.com',
    documentation_url: 'https://apidocs.chargebee.com/docs/api',
    connection_guide_url: 'https://apidocs.chargebee.com/docs/api',
    short_description: 'Subscription billing and revenue management.',
    description: 'Chargebee. Customers, invoices, credit notes and transactions are read through the Chargebee API with an API key.',
    categories: ['billing'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: ['site'],
    connection_instructions: ['In Chargebee, open Settings > Configure Chargebee > API Keys and create a read-only key.', 'Enter your site name and the key.'],
  },
  {
    name: 'zuora',
    display_name: 'Zuora',
    color: '#00A4E4',
    website: 'https://www.zuora.com',
    documentation_url: 'https://developer.zuora.com/',
    connection_guide_url: 'https://developer.zuora.com/',
    short_description: 'Subscription billing for enterprises.',
    description: 'Zuora. Accounts, invoices and payments are read through the Zuora REST API with an OAuth client (client credentials).',
    categories: ['billing'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['base_url'],
    connection_instructions: ['In Zuora, create an OAuth client for an API user with read access.', 'Enter the REST endpoint of your tenant, the client ID and the client secret.'],
  },
  {
    name: 'recurly',
    display_name: 'Recurly',
    color: '#6D36F5',
    website: 'https://recurly.com',
    documentation_url: 'https://recurly.com/developers/',
    connection_guide_url: 'https://recurly.com/developers/',
    short_description: 'Subscription management and billing.',
    description: 'Recurly. Accounts, invoices and transactions are read through the Recurly API v3 with a private API key.',
    categories: ['billing'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['In Recurly, open Integrations > API Credentials, create a private API key and paste it here.'],
  },
  // ------------------------------------------------------------------ banking
  {
    name: 'plaid',
    display_name: 'Plaid',
    color: '#111111',
    website: 'https://plaid.com',
    documentation_url: 'https://plaid.com/docs/',
    connection_guide_url: 'https://plaid.com/docs/',
    short_description: 'Bank account connections in North America and Europe.',
    description: 'Plaid. Bank accounts and transactions are read through the Plaid Transactions API.',
    categories: ['banking'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: ['environment'],
    connection_instructions: ['Enter the Plaid client ID and secret of your team.', 'Link the bank accounts whose transactions should be imported.'],
  },
  {
    name: 'gocardless_bank_account_data',
    display_name: 'GoCardless Bank Account Data',
    color: '#1C1B18',
    website: 'https://gocardless.com/bank-account-data/',
    documentation_url: 'https://developer.gocardless.com/bank-account-data/overview',
    connection_guide_url: 'https://developer.gocardless.com/bank-account-data/overview',
    short_description: 'Open-banking account data across Europe.',
    description: 'GoCardless Bank Account Data (formerly Nordigen). Accounts and transactions are read over open banking with user secrets.',
    categories: ['banking'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: ['country'],
    connection_instructions: [
      'Create user secrets (secret ID and secret key) in the Bank Account Data portal and enter them.',
      'Choose the country and the bank, then approve access at the bank.',
    ],
  },
  // ------------------------------------------------------------------ ticketing
  {
    name: 'zendesk',
    display_name: 'Zendesk',
    color: '#03363D',
    website: 'https://www.zendesk.com',
    documentation_url: 'https://developer.zendesk.com/api-reference/',
    connection_guide_url: 'https://developer.zendesk.com/api-reference/',
    short_description: 'Customer service ticketing.',
    description: 'Zendesk Support. Tickets about invoices and payments are read and created through the Zendesk API with OAuth 2.0.',
    categories: ['ticketing'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: ['subdomain'],
    connection_instructions: ['Enter your Zendesk subdomain.', 'Sign in as a Zendesk administrator and approve access.'],
  },
  {
    name: 'freshdesk',
    display_name: 'Freshdesk',
    color: '#25C16F',
    website: 'https://www.freshworks.com/freshdesk/',
    documentation_url: 'https://developers.freshdesk.com/api/',
    connection_guide_url: 'https://developers.freshdesk.com/api/',
    short_description: 'Customer support ticketing from Freshworks.',
    description: 'Freshdesk. Tickets are read and created through the Freshdesk API with an agent API key.',
    categories: ['ticketing'],
    auth_type: 'api_key',
    is_api_connection: true,
    required_settings: ['domain'],
    connection_instructions: ['Copy the API key from your Freshdesk profile settings.', 'Enter your Freshdesk domain and the key.'],
  },
  {
    name: 'jira_service_management',
    display_name: 'Jira Service Management',
    color: '#0052CC',
    website: 'https://www.atlassian.com/software/jira/service-management',
    documentation_url: 'https://developer.atlassian.com/cloud/jira/service-desk/rest/',
    connection_guide_url: 'https://developer.atlassian.com/cloud/jira/service-desk/rest/',
    short_description: 'Service desk ticketing from Atlassian.',
    description: 'Jira Service Management Cloud. Requests are read and created through its REST API with an Atlassian account e-mail and API token.',
    categories: ['ticketing'],
    auth_type: 'basic',
    is_api_connection: true,
    required_settings: ['site_url', 'service_desk_id'],
    connection_instructions: [
      'Create an API token for the Atlassian account this platform acts as.',
      'Enter your site URL, the account e-mail, the token and the service desk to use.',
    ],
  },
  // ------------------------------------------------------------------ CRM
  {
    name: 'salesforce',
    display_name: 'Salesforce',
    color: '#00A1E0',
    website: 'https://www.salesforce.com',
    documentation_url: 'https://developer.salesforce.com/docs/',
    connection_guide_url: 'https://developer.salesforce.com/docs/',
    short_description: 'Customer relationship management.',
    description: 'Salesforce. Accounts and contacts are read through the Salesforce REST API with OAuth 2.0.',
    categories: ['crm'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['Sign in to Salesforce with a user who may use the API and approve access.'],
  },
  {
    name: 'hubspot',
    display_name: 'HubSpot',
    color: '#FF7A59',
    website: 'https://www.hubspot.com',
    documentation_url: 'https://developers.hubspot.com/docs/api/overview',
    connection_guide_url: 'https://developers.hubspot.com/docs/api/overview',
    short_description: 'CRM platform for marketing, sales and service.',
    description: 'HubSpot. Companies and contacts are read through the HubSpot CRM API with OAuth 2.0.',
    categories: ['crm'],
    auth_type: 'oauth2',
    is_api_connection: true,
    required_settings: [],
    connection_instructions: ['Sign in to HubSpot as a super admin, choose the account and approve access.'],
  },
  // ------------------------------------------------------------------ middleware
  {
    name: 'middleware',
    display_name: 'Integration middleware',
    color: '#4A5568',
    website: null,
    documentation_url: '/docs',
    connection_guide_url: '/docs',
    short_description: 'Your own middleware pushes invoices and customers.',
    description:
      'For systems without a supported API: your integration middleware pushes invoice, credit-memo and customer ' +
      'records to this platform in batches of up to 100, authenticated with an organization API key.',
    categories: ['middleware'],
    auth_type: 'api_key',
    is_api_connection: false,
    required_settings: [],
    connection_instructions: [
      'Create an organization API key (POST /v2/api-keys) for the middleware.',
      'Have the middleware send invoices and credit memos to POST /v2/integrations/providers/middleware/invoices and customers to POST /v2/integrations/providers/middleware/customers.',
    ],
  },
];

/** Providers with a working adapter on this platform. */
export const PULL_ADAPTER_PROVIDERS: ReadonlySet<string> = new Set(['quickbooks_online']);
export const PUSH_ADAPTER_PROVIDERS: ReadonlySet<string> = new Set(['middleware']);
const ADAPTER_PROVIDERS: ReadonlySet<string> = new Set([...PULL_ADAPTER_PROVIDERS, ...PUSH_ADAPTER_PROVIDERS]);

/**
 * What the ERP posting of applied cash (workflow payment-posting-<paymentId>) can do per provider:
 * QuickBooks Online posts a Payment through its API, on account too (TotalAmt above the linked
 * lines is unapplied credit on the customer), and deletes it again. The middleware pulls a posting
 * queue (with the unallocated amount, to post on account) but has no way to take a posting back.
 * Every other provider has no posting at all.
 */
export const CASH_APP_FEATURES: Readonly<Record<string, ProviderDescriptor['cash_app_features']>> = {
  quickbooks_online: { can_unpost_payment: true, can_post_on_account_payment: true },
  middleware: { can_unpost_payment: false, can_post_on_account_payment: true },
};

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

function initials(displayName: string): string {
  const words = displayName.split(/[\s/]+/).filter((w) => /^[A-Za-z0-9]/.test(w));
  return (words.length > 1 ? words[0][0] + words[1][0] : displayName.slice(0, 2)).toUpperCase();
}

function svgDataUri(svg: string): string {
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/**
 * Self-contained logos (SVG data URIs in the provider's colour) rather than links to vendor assets:
 * the platform may run where the internet is not reachable, and we hold no rights to vendor marks.
 */
function logos(entry: ProviderEntry): { logo: string; logo_square: string } {
  const name = escapeXml(entry.display_name);
  const mark = escapeXml(initials(entry.display_name));
  return {
    logo: svgDataUri(
      `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="48" viewBox="0 0 240 48" role="img" aria-label="${name}">` +
        `<rect width="48" height="48" rx="8" fill="${entry.color}"/>` +
        `<text x="24" y="31" font-family="sans-serif" font-size="18" font-weight="700" fill="#fff" text-anchor="middle">${mark}</text>` +
        `<text x="60" y="30" font-family="sans-serif" font-size="15" fill="#1d2330">${name}</text></svg>`,
    ),
    logo_square: svgDataUri(
      `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64" role="img" aria-label="${name}">` +
        `<rect width="64" height="64" rx="12" fill="${entry.color}"/>` +
        `<text x="32" y="41" font-family="sans-serif" font-size="24" font-weight="700" fill="#fff" text-anchor="middle">${mark}</text></svg>`,
    ),
  };
}

function toDescriptor(entry: ProviderEntry): ProviderDescriptor {
  return {
    object: 'provider',
    name: entry.name,
    display_name: entry.display_name,
    color: entry.color,
    connection_guide_url: entry.connection_guide_url,
    documentation_url: entry.documentation_url,
    description: entry.description,
    short_description: entry.short_description,
    ...logos(entry),
    website: entry.website,
    categories: entry.categories,
    auth_type: entry.auth_type,
    is_api_connection: entry.is_api_connection,
    // Capability flags of our adapter (see the note at the top).
    is_webhooks_supported: false,
    is_enabled: ADAPTER_PROVIDERS.has(entry.name),
    is_manual_sync_supported: PULL_ADAPTER_PROVIDERS.has(entry.name),
    connection_instructions: entry.connection_instructions,
    required_settings: entry.required_settings,
    cash_app_features: CASH_APP_FEATURES[entry.name] ?? { can_unpost_payment: false, can_post_on_account_payment: false },
  };
}

/** Every provider, in catalogue order (ERP, accounting, billing and payments, banking, ticketing, CRM, middleware). */
export const PROVIDERS: readonly ProviderDescriptor[] = Object.freeze(ENTRIES.map(toDescriptor));

const BY_NAME = new Map(PROVIDERS.map((p) => [p.name, p]));

export function findProvider(name: string): ProviderDescriptor | undefined {
  return BY_NAME.get(name);
}

export function listProviders(filter: { category?: ProviderCategory } = {}): ProviderDescriptor[] {
  return filter.category ? PROVIDERS.filter((p) => p.categories.includes(filter.category!)) : [...PROVIDERS];
}
