import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';

export const integrationsConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8101),
});
export type IntegrationsConfig = z.infer<typeof integrationsConfigSchema>;

export function loadIntegrationsConfig(source: Record<string, string | undefined> = process.env): IntegrationsConfig {
  return loadConfig(integrationsConfigSchema, source);
}
