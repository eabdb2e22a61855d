import { runProcess, startServiceApi } from '@rp/platform';
import { cashAppModule } from './module.js';
import { loadCashAppConfig } from './config.js';

await runProcess('cash-app-api', async () => {
  const config = loadCashAppConfig();
  return startServiceApi(cashAppModule, config, { port: config.PORT, host: process.env.HOST });
});
