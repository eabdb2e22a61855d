import { createLogger, onShutdown, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { adminModule } from './module.js';
import { loadAdminConfig } from './config.js';

const config = loadAdminConfig();
const worker = await startServiceWorker(adminModule, config, { workflowsPath });
onShutdown(createLogger('admin-worker', config.LOG_LEVEL), worker.close);
