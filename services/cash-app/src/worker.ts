import { runProcess, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { cashAppModule } from './module.js';
import { loadCashAppConfig } from './config.js';

await runProcess('cash-app-worker', async () => startServiceWorker(cashAppModule, loadCashAppConfig(), { workflowsPath }));
