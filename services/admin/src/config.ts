import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';

export const adminConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8104),
  SMTP_URL: z.string().regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL').default('smtp://127.0.0.1:1025'),
  MAIL_FROM: z.string().min(3).default('Receivables Platform <no-reply@receivables.local>'),
  PUBLIC_BASE_URL: z.string().url().default('http://localhost:8080'),
  /** Lifetime of a user invite's token (default 7 days). */
  USER_INVITE_TTL_SECONDS: env.int(604_800, 1),
});
export type AdminConfig = z.infer<typeof adminConfigSchema>;

export function loadAdminConfig(source: Record<string, string | undefined> = process.env): AdminConfig {
  return loadConfig(adminConfigSchema, source);
}
