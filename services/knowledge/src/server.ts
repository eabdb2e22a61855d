/** The knowledge API process: the service's routes on PORT. */
import { runProcess, startServiceApi } from '@rp/platform';
import { knowledgeModule } from './module.js';
import { loadKnowledgeConfig } from './config.js';

await runProcess('knowledge-api', async () => {
  const config = loadKnowledgeConfig();
  return startServiceApi(knowledgeModule, config, { port: config.PORT, host: process.env.HOST });
});
