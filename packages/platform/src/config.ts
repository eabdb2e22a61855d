import { z } from 'zod';
import { OutboundPolicy } from './http/guarded-fetch.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parse configuration from the environment with a zod object schema whose keys are the environment
 * variable names. A bad value throws a ConfigError naming each offending variable.
 */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Record<string, string | undefined> = process.env): z.infer<S> {
  const source: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = env[key];
    source[key] = value === '' ? undefined : value;
  }
  const result = schema.safeParse(source);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? '(root)');
        const shown = source[name] === undefined ? 'not set' : `got ${JSON.stringify(redact(name, source[name]!))}`;
        return `${name}: ${issue.message} (${shown})`;
      }),
    );
  }
  return result.data;
}

function redact(name: string, value: string): string {
  return /SECRET|KEY|PASSWORD|TOKEN|CLIENTS/i.test(name) ? '***' : value;
}

/** Reusable field schemas for environment variables. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
  url: () => z.string().url(),
  secret: () => z.string().min(32, 'must be at least 32 characters'),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/** Settings every service process (API or worker) shares. */
export const commonConfigShape = {
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  DATABASE_POOL_MAX: env.int(10, 1),
  /**
   * Longest a statement of an API process (and the gateway) may run, in ms (0: no limit). The server
   * cancels it then (statement_timeout); a server that does not answer at all (frozen) is given up 2 s
   * later and the connection destroyed (db.ts). Either way the request answers 503 + Retry-After.
   * The default (15 s, given up at 17 s) stays under the gateway's UPSTREAM_TIMEOUT_MS (30 s), so a
   * client gets the 503 rather than a 504.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: env.int(15_000, 0),
  /** The same for a worker's statements (activities), in ms; default 10 minutes, 0: no limit. */
  DATABASE_WORKER_STATEMENT_TIMEOUT_MS: env.int(600_000, 0),
  TEMPORAL_ADDRESS: z.string().regex(/^[^\s:]+:\d+$/, 'must be host:port').default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TLS: env.bool(false),
  IDENTITY_SECRET: env.secret(),
  IDENTITY_MAX_AGE_SECONDS: env.int(60, 1),
  LOG_LEVEL: env.logLevel(),
  /** Bearer token Prometheus sends to GET /metrics (gateway and services); unset: /metrics answers 401. */
  METRICS_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  BODY_LIMIT_BYTES: env.int(1_048_576, 1024),
  /** Workers only: port of a small HTTP server with /healthz and /readyz (container healthchecks); unset: none. */
  WORKER_HEALTH_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Days events (and admin's webhook deliveries) are kept; each service's worker prunes its own daily (events/retention.ts). */
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(30),
  /**
   * S3-compatible object storage (attachments, uploaded files); see storage.ts. Optional: a service
   * that stores nothing runs without them; one that does refuses to start without S3_ENDPOINT and
   * S3_BUCKET (storageConfigFrom). Locally `npm start` runs versitygw and sets them.
   */
  S3_ENDPOINT: z.string().url().optional(),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)')
    .optional(),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  /** The S3 endpoint presigned URLs name, when clients reach the server elsewhere than the services (default S3_ENDPOINT). */
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  /**
   * Hosts, addresses and CIDRs (optionally `:port`) that tenant-supplied and provider URLs may reach
   * although they are loopback, private, link-local or metadata addresses (see guarded-fetch.ts).
   * Empty (the default): public addresses only.
   */
  OUTBOUND_ALLOWLIST: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return OutboundPolicy.parse(text);
      } catch (e) {
        ctx.addIssue({ code: 'custom', message: (e as Error).message });
        return z.NEVER;
      }
    }),
};

export const commonConfigSchema = z.object(commonConfigShape);
export type CommonConfig = z.infer<typeof commonConfigSchema>;
