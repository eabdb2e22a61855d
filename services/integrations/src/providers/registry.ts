/**
 * The provider registry as data: every kind of external system a connection can point at (spec
 * 2.2, "Provider descriptor"), in catalogue order, and which of them have a working adapter.
 * Reference data kept in code, not a table: it changes with the adapters, which ship with the
 * code. domain/providers.ts turns the entries into descriptors.
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
import { ERP_AND_ACCOUNTING_ENTRIES } from './entries-erp-accounting.js';
import { OTHER_ENTRIES } from './entries-other.js';
import type { ProviderDescriptor, ProviderEntry } from './types.js';

/** Every provider, in catalogue order (ERP, accounting, billing and payments, banking, ticketing, CRM, middleware). */
export const PROVIDER_ENTRIES: readonly ProviderEntry[] = [...ERP_AND_ACCOUNTING_ENTRIES, ...OTHER_ENTRIES];

/** Providers with a working adapter on this platform. */
export const PULL_ADAPTER_PROVIDERS: ReadonlySet<string> = new Set(['quickbooks_online']);
export const PUSH_ADAPTER_PROVIDERS: ReadonlySet<string> = new Set(['middleware']);
export const ADAPTER_PROVIDERS: ReadonlySet<string> = new Set([...PULL_ADAPTER_PROVIDERS, ...PUSH_ADAPTER_PROVIDERS]);

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
