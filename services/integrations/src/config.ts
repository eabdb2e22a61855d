/**
 * The integrations service's configuration from the environment: OAuth clients, provider URL
 * overrides for sandboxes and tests, secrets keys and provider call timeouts.
 */
import { z } from 'zod';
import { commonConfigShape, env, loadConfig, secretsKeyConfigShape } from '@rp/platform';

/** A JSON object in an environment variable, parsed and checked with `schema`. */
function jsonEnv<T extends z.ZodType>(schema: T, fallback: string) {
  return z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

export const oauthClientSchema = z.strictObject({ client_id: z.string().min(1), client_secret: z.string().min(1) });
export type OAuthClient = z.infer<typeof oauthClientSchema>;

export const providerUrlOverrideSchema = z.strictObject({
  authorize_url: z.string().url().optional(),
  token_url: z.string().url().optional(),
  api_base_url: z.string().url().optional(),
});
export type ProviderUrlOverride = z.infer<typeof providerUrlOverrideSchema>;

export const integrationsConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8101),
  /** AES-256-GCM key(s) of provider secrets at rest: the kernel's secrets key (packages/platform/src/secrets.ts). */
  ...secretsKeyConfigShape,
  /** OAuth client credentials per provider: `{"quickbooks_online":{"client_id":"…","client_secret":"…"}}`. */
  OAUTH_CLIENTS: jsonEnv(z.record(z.string(), oauthClientSchema), '{}'),
  /** Where providers send the user back after consent (the client application's page that calls authenticate). */
  OAUTH_REDIRECT_URI: z.string().url().optional(),
  /** How long a signed OAuth `state` stays valid. */
  OAUTH_STATE_TTL_SECONDS: env.int(3600, 60),
  /** Per-provider URL overrides for sandboxes and tests: `{"quickbooks_online":{"authorize_url","token_url","api_base_url"}}`. */
  PROVIDER_URL_OVERRIDES: jsonEnv(z.record(z.string(), providerUrlOverrideSchema), '{}'),
  /** Timeout of one HTTP call to a provider (token exchange, health check). */
  PROVIDER_HTTP_TIMEOUT_MS: env.int(15_000, 100),
  /** How long an API process may reuse a partner's detail (GET /v2/partners/{id}); 0: no cache (domain/partner-reads.ts). */
  PARTNER_READ_CACHE_TTL_MS: env.int(5_000, 0).pipe(z.number().max(600_000)),
});
export type IntegrationsConfig = z.infer<typeof integrationsConfigSchema>;

export function loadIntegrationsConfig(source: Record<string, string | undefined> = process.env): IntegrationsConfig {
  return loadConfig(integrationsConfigSchema, source);
}
