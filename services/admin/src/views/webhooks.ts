/** Webhook endpoints and deliveries as the API shows them: the secret only in the answers that issue one, never the sealed columns. */
import { isoTime } from '@rp/platform';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../store/webhooks/rows.js';

export function webhookEndpointView(row: WebhookEndpointRow) {
  return {
    object: 'webhook_endpoint' as const,
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    is_enabled: row.is_enabled,
    created_at: isoTime(row.created_at)!,
    modified_at: isoTime(row.modified_at)!,
    disabled_reason: row.disabled_reason,
  };
}

/** The endpoint with its secret: the answer of its creation only. */
export function webhookEndpointWithSecretView(row: WebhookEndpointRow, secret: string) {
  const { disabled_reason, ...rest } = webhookEndpointView(row);
  return { ...rest, secret, disabled_reason };
}

/** The answer of a rotation: the new secret, and until when the previous one still signs. */
export function webhookEndpointSecretView(row: WebhookEndpointRow, secret: string) {
  return {
    object: 'webhook_endpoint_secret' as const,
    endpoint_id: row.id,
    secret,
    previous_secret_expires_at: isoTime(row.previous_secret_expires_at),
  };
}

export function webhookDeliveryView(row: WebhookDeliveryRow) {
  return {
    object: 'webhook_delivery' as const,
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: isoTime(row.last_attempt_at),
    next_attempt_at: isoTime(row.next_attempt_at),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    created_at: isoTime(row.created_at)!,
  };
}
