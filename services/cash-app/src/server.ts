import { runProcess, startServiceApi } from '@rp/platform';
import { cashAppModule } from './module.js';
import { loadCashAppConfig } from './config.js';
import { closeSharedTailPool } from './domain/tail-pool.js';

await runProcess('cash-app-api', async () => {
  const config = loadCashAppConfig();
  const api = await startServiceApi(cashAppModule, config, { port: config.PORT, host: process.env.HOST });
  return {
    close: async () => {
      await api.close(); // stop taking requests, finish the open ones
      await closeSharedTailPool(); // then stop the predicted-overdue worker threads
    },
  };
});
