/** The admin service's environment: the kit's common settings plus invites, mail, templates, reports and object storage. */
import { z } from 'zod';
import { commonConfigShape, defaultTemplateThreads, env, loadConfig, secretsKeyConfigShape } from '@rp/platform';
import { hostnameSchema } from './domain/hostnames.js';

export const adminConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8104),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').default('smtp://127.0.0.1:1025'),
  MAIL_FROM: z.string().min(3).default('Receivables Platform <no-reply@receivables.local>'),
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:8080'),
  /** AES-256-GCM key(s) of secrets at rest (the mailbox's domain-send API key): the kernel's secrets key. */
  ...secretsKeyConfigShape,
  /**
   * Domain under which the platform receives each organization's inbound email when it has no custom
   * `inbound_parse_hostname`: `<organization id>.<MAIL_INBOUND_DOMAIN>`.
   */
  MAIL_INBOUND_DOMAIN: hostnameSchema().default('inbound.receivables.local'),
  /**
   * AR inbox: the optional language model refining the rules' category of a message
   * (domain/inbox/refine.ts) — the base URL of an OpenAI-compatible API (…/v1) and the model; both
   * unset (the default): the rules alone decide. The key is a secret: redacted wherever configuration is shown.
   */
  INBOX_LLM_URL: z.string().regex(/^https?:\/\/[^\s/]+/, 'must be an http:// or https:// URL').max(2000).optional(),
  INBOX_LLM_MODEL: z.string().min(1).max(200).optional(),
  INBOX_LLM_API_KEY: z.string().min(1).max(1000).optional(),
  INBOX_LLM_TIMEOUT_MS: env.int(10_000, 100).pipe(z.number().max(120_000)),
  /**
   * Port of the inbound SMTP listener the admin API process runs beside its HTTP API (mail to the
   * organizations' inbound hosts; services/admin/src/inbound/smtp.ts); 0: no listener in this process.
   */
  INBOUND_SMTP_PORT: env.port(2525),
  /** Address the inbound SMTP listener binds (default all interfaces: it is the MX's next hop). */
  INBOUND_SMTP_HOST: z.string().min(1).max(253).default('0.0.0.0'),
  /** Collection runs: customers per planning page (each page is one transaction and one heartbeat). */
  COLLECTIONS_PLAN_PAGE_SIZE: env.int(500, 1).pipe(z.number().max(10_000)),
  /** Collection runs: planned actions per doing batch (one activity), and how many are sent at once. */
  COLLECTIONS_ACT_BATCH_SIZE: env.int(200, 1).pipe(z.number().max(5_000)),
  COLLECTIONS_ACT_CONCURRENCY: env.int(16, 1).pipe(z.number().max(128)),
  /**
   * SMS provider speaking Twilio's Messages API (packages/platform/src/sms.ts): its base URL, the
   * account and the auth token of HTTP Basic. The default URL is the local SMS sink `npm start`
   * runs (scripts/local/sms-sink.ts); without SMS_AUTH_TOKEN no text can be sent (a send fails
   * permanently, saying so), everything else runs.
   */
  SMS_PROVIDER_URL: z.string().regex(/^https?:\/\/[^\s/]+/, 'must be an http:// or https:// URL').default('http://127.0.0.1:1090'),
  SMS_ACCOUNT_SID: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -').default('AC00000000000000000000000000000000'),
  /** Secret: redacted wherever configuration is shown. */
  SMS_AUTH_TOKEN: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  /** Sender number of texts, E.164 (`+` and 8-15 digits). */
  SMS_FROM: z.string().regex(/^\+[1-9]\d{7,14}$/, 'must be a phone number in E.164 (+ and 8-15 digits)').default('+15005550006'),
  /** Lifetime of a user invite's token (default 7 days). */
  USER_INVITE_TTL_SECONDS: env.int(604_800, 1),
  /** Validity of the presigned link a report email carries instead of a file over 10 MB (default 7 days, the SigV4 maximum). */
  REPORT_LINK_TTL_SECONDS: env.int(604_800, 60).pipe(z.number().max(604_800)),
  /** Worker threads rendering Liquid templates off the event loop (default: one less than the cores, 1..2). */
  TEMPLATE_RENDER_THREADS: env.int(defaultTemplateThreads(), 1).pipe(z.number().max(16)),
  /** Renders that may wait for a thread; one more is answered 503 with Retry-After (default 32). */
  TEMPLATE_RENDER_QUEUE: env.int(32, 0).pipe(z.number().max(10_000)),
  /**
   * Seconds between a webhook delivery's attempts, one per retry (spec: first retry within 10 s, the
   * second within 60 s of it, then backoff over at least 24 h): 8 attempts in all by default, after
   * 5 s, 30 s, 30 min, 2 h, 5 h, 12 h and 12 h. From the third on, each delay varies by ±20 % so the
   * retries of many deliveries spread out; even all at -20 % the attempts span more than 24 hours.
   */
  WEBHOOK_RETRY_DELAYS_SECONDS: z
    .string()
    .default('5,30,1800,7200,18000,43200,43200')
    .transform((v) => v.split(',').map((s) => Number(s.trim())))
    .pipe(z.array(z.number().positive().max(7 * 86_400)).min(1).max(20)),
  /** Milliseconds a webhook receiver has to answer 2xx (default 10 s); longer counts as a failed attempt. */
  WEBHOOK_TIMEOUT_MS: env.int(10_000, 100).pipe(z.number().max(60_000)),
  /** Hours an endpoint may fail every attempt before it is disabled and its organization's admins are told (default 72). */
  WEBHOOK_DISABLE_AFTER_HOURS: z.coerce.number().positive().max(8760).default(72),
  /** Requests in flight to one webhook endpoint at a time (default 32). */
  WEBHOOK_CONCURRENCY: env.int(32, 1).pipe(z.number().max(256)),
  /** Days after its promised date a promise to pay has to be covered before it is broken (default 3; 0: by the end of the promised date). */
  PROMISE_GRACE_DAYS: env.int(3, 0).pipe(z.number().max(30)),
  /** Seconds between a promise's checks before its deadline, which mark it kept once covered (default a day). */
  PROMISE_RECHECK_SECONDS: env.int(86_400, 1).pipe(z.number().max(7 * 86_400)),
  /**
   * How long an API process reuses a user's detail (GET /v2/users/me and /v2/users/{id}) at most: every
   * change made through the service is heard at once (LISTEN/NOTIFY), so this only bounds a change made by
   * hand in the database (default 5 s; 0 turns the cache off).
   */
  USER_READ_CACHE_TTL_MS: env.int(5_000, 0).pipe(z.number().max(600_000)),
});
export type AdminConfig = z.infer<typeof adminConfigSchema>;

export function loadAdminConfig(source: Record<string, string | undefined> = process.env): AdminConfig {
  return loadConfig(adminConfigSchema, source);
}
