/**
 * The Standard Webhooks request of one attempt: `webhook-id` (the event id, the same on every
 * attempt), `webhook-timestamp` (this attempt's Unix seconds), `webhook-signature` (`v1,<base64
 * HMAC-SHA256 of "{id}.{timestamp}.{body}">`, made by the maintained `standardwebhooks` package),
 * with a second signature by the previous secret while it is still valid after a rotation
 * (space-separated, as the specification allows).
 */
import { Webhook } from 'standardwebhooks';

export const WEBHOOK_USER_AGENT = 'ReceivablesPlatform-Webhooks/1.0 (+https://www.standardwebhooks.com)';

export function webhookHeaders(eventId: string, body: string, secrets: readonly string[], at: Date): Record<string, string> {
  const signatures = secrets.map((s) => new Webhook(s).sign(eventId, at, body));
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
