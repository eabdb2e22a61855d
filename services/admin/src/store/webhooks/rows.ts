/** Rows of the webhook tables (migration 011_events_webhooks). */
export interface WebhookEndpointRow {
  id: string;
  organization_id: string;
  url: string;
  events: string[];
  description: string | null;
  is_enabled: boolean;
  /** sealed `whsec_…` secret (kernel secrets.ts, aad `webhook-endpoint:<id>`) */
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_expires_at: Date | null;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  modified_at: Date;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveryRow {
  id: string;
  seq: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  event_source: string;
  event_type: string;
  resource_key: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Date;
  modified_at: Date;
}

/** The additional authenticated data binding a sealed endpoint secret to its endpoint. */
export function endpointSecretAad(endpointId: string): string {
  return `webhook-endpoint:${endpointId}`;
}
