/**
 * The shapes of the provider registry (spec 2.2 "Provider descriptor"): what an entry of the
 * registry states, and the descriptor the API answers.
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
export interface ProviderEntry {
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
