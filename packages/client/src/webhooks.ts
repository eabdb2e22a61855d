/**
 * Receiving the platform's webhooks: the typed event payloads (from the generated `webhooks` of the
 * OpenAPI document) and `verifyWebhook`, which checks a delivery with the maintained
 * `standardwebhooks` package (the Standard Webhooks reference implementation) before anything in it
 * is trusted:
 *
 *   const event = verifyWebhook(process.env.WEBHOOK_SECRET!, req.headers, rawBody);
 *   if (event.type === 'payment.posted') console.log(event.data.object.id); // typed per type
 */
import { Webhook, WebhookVerificationError as StandardWebhookError } from 'standardwebhooks';
import type { components, webhooks } from './generated/openapi.js';

/** Every event type of the catalogue. */
export type WebhookEventType = components['schemas']['EventType'];

/** The body the `webhooks` section of the OpenAPI document declares for type T (undefined when it declares none). */
type DeclaredBody<T extends string> = T extends keyof webhooks
  ? [webhooks[T]] extends [never]
    ? undefined
    : webhooks[T] extends { post: { requestBody: { content: { 'application/json': infer B } } } }
      ? B
      : undefined
  : undefined;

/** The generic envelope narrowed to one type, for a type whose payload the document does not declare. */
type GenericEvent<T extends WebhookEventType> = Omit<components['schemas']['Event'], 'type'> & { type: T };

/**
 * The webhook body (the event envelope) of type T, `data.object` typed as the resource the type
 * carries: `WebhookEvent<'payment.posted'>['data']['object']` is the Payment.
 */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = T extends WebhookEventType
  ? DeclaredBody<T> extends undefined
    ? GenericEvent<T>
    : DeclaredBody<T>
  : never;

/** Any webhook body, a union discriminated by `type` (switch on it to narrow `data.object`). */
export type AnyWebhookEvent = WebhookEvent<WebhookEventType>;

/** Why a delivery was refused. */
export type WebhookVerificationReason = 'missing_headers' | 'invalid_timestamp' | 'stale_timestamp' | 'future_timestamp' | 'bad_signature' | 'invalid_body';

/** A delivery that is not authentic, too old or too new, or not an event: answer it with 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

/** What the package says, as a reason (its messages are its documented outcomes). */
const REASONS: Record<string, [WebhookVerificationReason, string]> = {
  'Missing required headers': ['missing_headers', 'the webhook-id, webhook-timestamp and webhook-signature headers are required'],
  'Invalid Signature Headers': ['invalid_timestamp', 'webhook-timestamp is not a Unix time in seconds'],
  'Message timestamp too old': ['stale_timestamp', 'webhook-timestamp is more than 5 minutes old (a replayed or long-delayed request)'],
  'Message timestamp too new': ['future_timestamp', 'webhook-timestamp is more than 5 minutes in the future'],
  'No matching signature found': ['bad_signature', 'no signature in webhook-signature matches the body and the secret'],
};

/** Request headers as Node (`req.headers`), the Fetch API (`request.headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

const HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

function headerValues(headers: WebhookHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    for (const name of HEADER_NAMES) {
      const v = (headers as Headers).get(name);
      if (v !== null) out[name] = v;
    }
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    const name = key.toLowerCase();
    if (!(HEADER_NAMES as readonly string[]).includes(name) || value === undefined) continue;
    // a repeated signature header carries more signatures (space-separated is the one-header form)
    out[name] = typeof value === 'string' ? value : value.join(' ');
  }
  return out;
}

function bodyText(rawBody: string | Uint8Array): string {
  if (typeof rawBody === 'string') return rawBody;
  if (rawBody instanceof Uint8Array) return new TextDecoder().decode(rawBody);
  throw new TypeError('verifyWebhook: rawBody must be the request body exactly as received (a string or bytes), not parsed JSON: the signature covers the raw bytes');
}

/**
 * Verifies a webhook delivery and returns its event, typed by `type`.
 *
 * `secret`: the endpoint's secret (`whsec_…`, returned when the endpoint was created or its secret
 * rotated). `headers`: the request's headers. `rawBody`: the request body exactly as received, before
 * any JSON parsing (a re-serialised body does not verify).
 *
 * Throws WebhookVerificationError (with `reason`) when a header is missing, the timestamp is more
 * than 5 minutes off (replay protection), no signature matches, or the body is not an event whose id
 * is the `webhook-id`; a TypeError for a secret that is not a Standard Webhooks secret. During a
 * secret rotation the platform sends two signatures; one matching is enough. An event type newer
 * than this client is returned as it came.
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, rawBody: string | Uint8Array): AnyWebhookEvent {
  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch (err) {
    throw new TypeError(`verifyWebhook: the secret is not a webhook endpoint secret (whsec_ followed by base64): ${(err as Error).message}`);
  }
  const values = headerValues(headers);
  const text = bodyText(rawBody);
  let event: unknown;
  try {
    event = webhook.verify(text, values);
  } catch (err) {
    if (err instanceof StandardWebhookError) {
      const [reason, message] = REASONS[err.message] ?? ['bad_signature', err.message];
      throw new WebhookVerificationError(reason, `Webhook refused: ${message}.`);
    }
    // signed by the secret, but not JSON
    throw new WebhookVerificationError('invalid_body', `Webhook refused: the body is not JSON (${(err as Error).message}).`);
  }
  const e = event as { id?: unknown; object?: unknown; type?: unknown; data?: unknown } | null;
  if (!e || typeof e !== 'object' || e.object !== 'event' || typeof e.type !== 'string' || !e.data || typeof e.data !== 'object' || e.id !== values['webhook-id']) {
    throw new WebhookVerificationError('invalid_body', 'Webhook refused: the body is not an event envelope whose id is the webhook-id header.');
  }
  return event as AnyWebhookEvent;
}
