import { createLogger, onShutdown, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { cashAppModule } from './module.js';
import { loadCashAppConfig } from './config.js';

const config = loadCashAppConfig();
const worker = await startServiceWorker(cashAppModule, config, { workflowsPath });
onShutdown(createLogger('cash-app-worker', config.LOG_LEVEL), worker.close);
