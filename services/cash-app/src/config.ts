import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';

export const cashAppConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8102),
});
export type CashAppConfig = z.infer<typeof cashAppConfigSchema>;

export function loadCashAppConfig(source: Record<string, string | undefined> = process.env): CashAppConfig {
  return loadConfig(cashAppConfigSchema, source);
}
