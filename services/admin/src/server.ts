/** Starts the admin service's HTTP API. */
import { runProcess, startServiceApi } from '@rp/platform';
import { adminModule } from './module.js';
import { loadAdminConfig } from './config.js';

await runProcess('admin-api', async () => {
  const config = loadAdminConfig();
  return startServiceApi(adminModule, config, { port: config.PORT, host: process.env.HOST });
});
