/**
 * Types and value lists shared by domain, store and views: connection health (spec 2.2 "Health")
 * and sync-run statuses (spec 2.2 "Sync run"), kept here so that no layer imports another for them.
 */
/**
 * Connection health (spec 2.2 "Health"). `status_code` values:
 *
 * | status_code             | healthy | authentication_required | when |
 * |-------------------------|---------|-------------------------|------|
 * | `healthy`               | true    | false | the provider answered an authenticated call (or, for the push-based middleware, nothing has to be called) |
 * | `authentication_required` | false | true  | no credentials yet, the provider refused them (401/403), or a token refresh was refused |
 * | `unreachable`           | false   | false | the provider's API could not be reached (DNS, connection refused, timeout) |
 * | `misconfigured`         | false   | false | required settings are missing, or no OAuth client is configured on this platform for the provider |
 * | `rate_limited`          | false   | false | the provider answered 429 |
 * | `provider_error`        | false   | false | the provider answered 5xx or an unexpected status |
 * | `unsupported_provider`  | false   | false | this platform has no adapter for the provider (its credentials may have been verified; nothing syncs) |
 */
export const HEALTH_STATUS_CODES = [
  'healthy',
  'authentication_required',
  'unreachable',
  'misconfigured',
  'rate_limited',
  'provider_error',
  'unsupported_provider',
] as const;
export type HealthStatusCode = (typeof HEALTH_STATUS_CODES)[number];

export interface Health {
  healthy: boolean;
  authentication_required: boolean;
  status_code: HealthStatusCode;
  message: string;
  suggested_resolution: string;
  timestamp: string;
}

/** A sync run's status (spec 2.2 "Sync run"). */
export const SYNC_RUN_STATUSES = ['scheduled', 'running', 'completed', 'failed', 'cancelled'] as const;
export type SyncRunStatus = (typeof SYNC_RUN_STATUSES)[number];
