import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';
import { parseTrustedProxies } from './client-address.js';

export const gatewayConfigSchema = z.object({
  DATABASE_URL: commonConfigShape.DATABASE_URL,
  DATABASE_STATEMENT_TIMEOUT_MS: commonConfigShape.DATABASE_STATEMENT_TIMEOUT_MS,
  IDENTITY_SECRET: commonConfigShape.IDENTITY_SECRET,
  LOG_LEVEL: commonConfigShape.LOG_LEVEL,
  BODY_LIMIT_BYTES: commonConfigShape.BODY_LIMIT_BYTES,
  /** Body limit of the file-upload endpoints (UPLOAD_PATHS in openapi.ts: bank statement upload). */
  UPLOAD_LIMIT_BYTES: env.int(52_428_800, 1024),
  PORT: env.port(8080),
  ADMIN_URL: z.string().url().default('http://127.0.0.1:8104'),
  INTEGRATIONS_URL: z.string().url().default('http://127.0.0.1:8101'),
  CASH_APP_URL: z.string().url().default('http://127.0.0.1:8102'),
  KNOWLEDGE_URL: z.string().url().default('http://127.0.0.1:8103'),
  UPSTREAM_TIMEOUT_MS: env.int(30_000, 100),
  /** /readyz: how long the upstreams' readiness is reused, and the timeout of each upstream's /readyz call. */
  READYZ_CACHE_MS: env.int(2000, 0),
  READYZ_UPSTREAM_TIMEOUT_MS: env.int(1500, 100),
  /** Sustained requests per second per credential (token bucket refill rate); 0 disables. */
  RATE_LIMIT_PER_SECOND: env.int(50, 0),
  /** Burst size per credential (token bucket capacity). */
  RATE_LIMIT_BURST: env.int(100, 1),
  AUTH_CACHE_TTL_MS: env.int(60_000, 0),
  /**
   * Failed authentications (401) one client address may have in a burst before it gets 429 without
   * any credential look-up, and how many it regains per minute (token bucket; 0 per minute disables the limit).
   */
  AUTH_FAILURE_BURST: env.int(30, 1),
  AUTH_FAILURE_PER_MINUTE: env.int(30, 0),
  /**
   * Requests one client address may make to the public routes (route-table.ts PUBLIC_ROUTES: accepting
   * a user invite) in a burst, and how many it regains per minute (token bucket; 0 per minute disables).
   */
  PUBLIC_RATE_LIMIT_BURST: env.int(10, 1),
  PUBLIC_RATE_LIMIT_PER_MINUTE: env.int(10, 0),
  /**
   * The inbound mail endpoint (POST /v2/inbound/email/{organization_id}): messages one organization
   * may be posted in a burst, and how many it regains per minute (token bucket; 0 per minute disables).
   */
  INBOUND_RATE_LIMIT_BURST: env.int(60, 1),
  INBOUND_RATE_LIMIT_PER_MINUTE: env.int(600, 0),
  /**
   * Body limit of the inbound mail endpoint: a 25 MiB message with the provider's form around it
   * (admin refuses and records messages over 25 MiB itself, up to its 27 MiB form limit).
   */
  INBOUND_BODY_LIMIT_BYTES: env.int(33_554_432, 1024),
  /**
   * Reverse proxies (addresses or CIDRs) whose X-Forwarded-For is believed. Empty (the default):
   * the client address is the socket's peer and X-Forwarded-For is ignored.
   */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return parseTrustedProxies(text);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
  METRICS_TOKEN: commonConfigShape.METRICS_TOKEN,
});
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function loadGatewayConfig(source: Record<string, string | undefined> = process.env): GatewayConfig {
  return loadConfig(gatewayConfigSchema, source);
}
