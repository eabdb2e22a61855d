/**
 * Connection health values (spec 2.2 "Health"): building them from a provider's answer, and their documentation.
 */
import { HEALTH_STATUS_CODES, type Health, type HealthStatusCode } from '../types.js';

export { HEALTH_STATUS_CODES, type Health, type HealthStatusCode };

export const HEALTH_STATUS_DOC =
  'Health `status_code`: `healthy` (the provider answered an authenticated call; for the push-based middleware nothing has to be called); ' +
  '`authentication_required` (no credentials yet, the provider refused them with 401/403, or a token refresh was refused; authenticate again); ' +
  '`unreachable` (the provider could not be reached: DNS, refused connection, timeout); `misconfigured` (required settings missing, ' +
  'or no OAuth client configured on this platform for the provider); `rate_limited` (the provider answered 429); `provider_error` ' +
  '(the provider answered 5xx or an unexpected status); `unsupported_provider` (this platform has no adapter for the provider: ' +
  'credentials may be verified, but nothing syncs).';

export function health(status_code: HealthStatusCode, message: string, suggested_resolution = '', now = new Date()): Health {
  return {
    healthy: status_code === 'healthy',
    authentication_required: status_code === 'authentication_required',
    status_code,
    message,
    suggested_resolution,
    timestamp: now.toISOString(),
  };
}

/** Health from a provider's HTTP status on an authenticated call. */
export function healthFromStatus(providerDisplayName: string, status: number, detail = ''): Health {
  const suffix = detail ? `: ${detail}` : '';
  if (status >= 200 && status < 300) return health('healthy', `${providerDisplayName} answered an authenticated request.`);
  if (status === 401 || status === 403) {
    return health(
      'authentication_required',
      `${providerDisplayName} refused the stored credentials (HTTP ${status})${suffix}.`,
      'Authenticate the connection again (POST /v2/integrations/connections/{connection_id}/authenticate).',
    );
  }
  if (status === 429) return health('rate_limited', `${providerDisplayName} is rate-limiting requests (HTTP 429).`, 'Wait and run the health check again.');
  return health(
    'provider_error',
    `${providerDisplayName} answered HTTP ${status}${suffix}.`,
    status >= 500 ? 'The provider has a problem; try again later.' : 'Check the connection settings against the provider.',
  );
}

export function unreachable(providerDisplayName: string, url: string, cause: string): Health {
  return health('unreachable', `${providerDisplayName} could not be reached at ${new URL(url).origin} (${cause}).`, 'Check the provider URL and the network, then run the health check again.');
}
