/**
 * The integrations API process.
 */
import { runProcess, startServiceApi } from '@rp/platform';
import { integrationsModule } from './module.js';
import { loadIntegrationsConfig } from './config.js';

await runProcess('integrations-api', async () => {
  const config = loadIntegrationsConfig();
  return startServiceApi(integrationsModule, config, { port: config.PORT, host: process.env.HOST });
});
