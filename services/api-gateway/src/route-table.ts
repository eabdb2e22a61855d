import type { GatewayConfig } from './config.js';

export type ServiceName = 'admin' | 'integrations' | 'cash-app' | 'knowledge';

/**
 * Which service owns which path: the one place routing is declared. Longest prefix wins; a
 * prefix matches a whole path segment (`/v2/users` matches `/v2/users/me`, not `/v2/usersx`).
 */
export const ROUTE_TABLE: ReadonlyArray<{ prefix: string; service: ServiceName }> = [
  // integrations: providers, connections, middleware push (spec 2.2, 2.20)
  { prefix: '/v2/integrations', service: 'integrations' },
  // cash application (spec 2.8, 2.14, 2.15, 2.17)
  { prefix: '/v2/analytics', service: 'cash-app' },
  { prefix: '/v2/bank-statements', service: 'cash-app' },
  { prefix: '/v2/payments', service: 'cash-app' },
  { prefix: '/v2/adjustments', service: 'cash-app' },
  { prefix: '/v2/cash-app', service: 'cash-app' },
  { prefix: '/v2/exchange-rates', service: 'cash-app' },
  { prefix: '/v1/remittances', service: 'cash-app' },
  // knowledge (spec 2.7, 2.10-2.12)
  { prefix: '/v2/aether', service: 'knowledge' },
  { prefix: '/v2/deductions', service: 'knowledge' },
  // organization administration (spec 2.6, 2.16, 2.18, 2.19)
  { prefix: '/v2/business-units', service: 'admin' },
  { prefix: '/v2/users', service: 'admin' },
  { prefix: '/v2/api-keys', service: 'admin' },
  { prefix: '/v2/cnam-registration', service: 'admin' },
  { prefix: '/v2/mailbox-settings', service: 'admin' },
  { prefix: '/v1/user-invites', service: 'admin' },
  // collections outreach (spec 2.4, 2.5)
  { prefix: '/v1/email-template-folders', service: 'admin' },
  { prefix: '/v1/email-templates', service: 'admin' },
  { prefix: '/v2/sms-templates', service: 'admin' },
  // collections outreach: tags and customer segments (spec 2.9, 2.13); partners stay with the ledger owner
  { prefix: '/v2/customer-segments', service: 'admin' },
  { prefix: '/v1/tags', service: 'admin' },
  // collections engine: policies, runs and actions, follow-up tasks, promises to pay, disputes
  { prefix: '/v2/collection-policies', service: 'admin' },
  { prefix: '/v2/collections', service: 'admin' },
  { prefix: '/v2/tasks', service: 'admin' },
  { prefix: '/v2/promises-to-pay', service: 'admin' },
  { prefix: '/v2/disputes', service: 'admin' },
  // the AR inbox (received messages)
  { prefix: '/v2/inbox', service: 'admin' },
  // scheduled reports (spec 2.3) and the organization's own settings (its timezone moves the report Schedules)
  { prefix: '/v2/report-configs', service: 'admin' },
  { prefix: '/v2/organization', service: 'admin' },
  // events and outbound webhooks (recorded by every service, read and delivered by admin)
  { prefix: '/v2/events', service: 'admin' },
  { prefix: '/v2/webhook-endpoints', service: 'admin' },
  { prefix: '/v2/partners', service: 'integrations' },
  // the AR inbox: mail in from providers (authenticated by the organization's inbound secret, not a bearer token)
  { prefix: '/v2/inbound', service: 'admin' },
];

/**
 * Admin path prefixes whose writes never change a credential, a user, a role, business units or
 * permissions (the organization's collections outreach configuration). The gateway answers them
 * without the credential-cache sync (CredentialResolver.sync: a NOTIFY round trip through Postgres)
 * that precedes the answer of every other successful admin write; e.g. a template preview is a
 * POST that only reads. An admin prefix not listed here keeps the sync (fail-safe).
 */
export const CREDENTIAL_NEUTRAL_ADMIN_PREFIXES: readonly string[] = [
  '/v1/email-template-folders',
  '/v1/email-templates',
  '/v2/sms-templates',
  '/v2/customer-segments',
  '/v1/tags',
  '/v2/webhook-endpoints',
  '/v2/collection-policies',
  '/v2/collections',
  '/v2/tasks',
  '/v2/promises-to-pay',
  '/v2/disputes',
  '/v2/inbox',
  '/v2/inbound',
];

/** Whether a successful non-GET request to this admin path may have changed credentials (see above). */
export function adminWriteMayChangeCredentials(path: string): boolean {
  return !CREDENTIAL_NEUTRAL_ADMIN_PREFIXES.some((prefix) => path === prefix || path.startsWith(prefix + '/'));
}

/**
 * The routes the gateway lets through WITHOUT a bearer token (exact method and path): the request
 * carries its own credential (an invite token in the body). They are rate-limited per client address
 * (PUBLIC_RATE_LIMIT_*), their 401 answers count against the address's failed-authentication budget,
 * and the service gets an anonymous signed identity, which every other route refuses.
 */
export const PUBLIC_ROUTES: ReadonlyArray<{ method: string; path: string }> = [{ method: 'POST', path: '/v1/user-invites/accept' }];

export function isPublicRoute(method: string, path: string): boolean {
  return PUBLIC_ROUTES.some((r) => r.method === method && r.path === path);
}

const INBOUND_EMAIL = /^\/v2\/inbound\/email\/([^/]{1,64})$/;

/**
 * The inbound mail endpoint `POST /v2/inbound/email/{organization_id}`: the organization id it names,
 * or null for any other request. No bearer token there: the provider presents the organization's
 * inbound secret (HTTP Basic or X-Inbound-Secret), which the gateway forwards and admin verifies.
 * Its own limits apply (INBOUND_RATE_LIMIT_* per organization, INBOUND_BODY_LIMIT_BYTES), and its
 * 401 answers count against the client address's failed-authentication budget.
 */
export function inboundOrganization(method: string, path: string): string | null {
  if (method !== 'POST') return null;
  return INBOUND_EMAIL.exec(path)?.[1] ?? null;
}

/**
 * Exact path shapes owned by another service than their prefix's, checked before the prefixes: a
 * customer's timeline lives under the ledger owner's `/v2/partners` but is served by admin, which
 * owns collections and merges cash-app's part of it.
 */
export const ROUTE_PATTERNS: ReadonlyArray<{ pattern: RegExp; service: ServiceName }> = [
  { pattern: /^\/v2\/partners\/[^/]+\/activity$/, service: 'admin' },
];

const SORTED = [...ROUTE_TABLE].sort((a, b) => b.prefix.length - a.prefix.length);

export function serviceFor(path: string): ServiceName | null {
  for (const { pattern, service } of ROUTE_PATTERNS) if (pattern.test(path)) return service;
  for (const { prefix, service } of SORTED) {
    if (path === prefix || path.startsWith(prefix + '/')) return service;
  }
  return null;
}

export function upstreams(config: GatewayConfig): Record<ServiceName, URL> {
  return {
    admin: new URL(config.ADMIN_URL),
    integrations: new URL(config.INTEGRATIONS_URL),
    'cash-app': new URL(config.CASH_APP_URL),
    knowledge: new URL(config.KNOWLEDGE_URL),
  };
}
