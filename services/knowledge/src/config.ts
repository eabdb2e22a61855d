import { z } from 'zod';
import { commonConfigShape, env, loadConfig } from '@rp/platform';

export const knowledgeConfigSchema = z.object({
  ...commonConfigShape,
  PORT: env.port(8103),
});
export type KnowledgeConfig = z.infer<typeof knowledgeConfigSchema>;

export function loadKnowledgeConfig(source: Record<string, string | undefined> = process.env): KnowledgeConfig {
  return loadConfig(knowledgeConfigSchema, source);
}
