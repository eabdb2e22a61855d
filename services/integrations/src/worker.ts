import { createLogger, onShutdown, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { integrationsModule } from './module.js';
import { loadIntegrationsConfig } from './config.js';

const config = loadIntegrationsConfig();
const worker = await startServiceWorker(integrationsModule, config, { workflowsPath });
onShutdown(createLogger('integrations-worker', config.LOG_LEVEL), worker.close);
