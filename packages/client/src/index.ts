/**
 * Typed client of the Receivables Platform API. The types (`paths`, `components`, `operations`) are
 * generated from the gateway's /openapi.json by openapi-typescript (`npm run client:generate`);
 * calls go through openapi-fetch, so paths, parameters, bodies and answers are checked by the
 * compiler:
 *
 *   const rp = createPlatformClient({ baseUrl: 'http://127.0.0.1:8080', token: process.env.RP_TOKEN! });
 *   const { data, error, response } = await rp.GET('/v2/adjustments/{adjustment_id}', {
 *     params: { path: { adjustment_id: id } },
 *   });
 *   // data: the Adjustment on 2xx, else undefined; error: the ErrorV2 body otherwise.
 *
 * Webhook receivers verify each delivery with `verifyWebhook` (./webhooks.ts), which returns the
 * event typed by its `type`.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';

export type { components, operations, paths, webhooks } from './generated/openapi.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type AnyWebhookEvent,
  type WebhookEvent,
  type WebhookEventType,
  type WebhookHeaders,
  type WebhookVerificationReason,
} from './webhooks.js';
export type { Client, ClientOptions, Middleware } from 'openapi-fetch';

export type PlatformClient = Client<paths>;

export interface PlatformClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A user access token (rpu_…) or an organization API key (rpk_…); sent as `Authorization: Bearer`. */
  token?: string;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/** A client for the gateway at `baseUrl`, authenticated with `token` when given. */
export function createPlatformClient({ token, headers, ...options }: PlatformClientOptions): PlatformClient {
  const auth: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  return createClient<paths>({ ...options, headers: { ...auth, ...headers } });
}
