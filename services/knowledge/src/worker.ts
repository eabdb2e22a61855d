import { createLogger, onShutdown, startServiceWorker } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { knowledgeModule } from './module.js';
import { loadKnowledgeConfig } from './config.js';

const config = loadKnowledgeConfig();
const worker = await startServiceWorker(knowledgeModule, config, { workflowsPath });
onShutdown(createLogger('knowledge-worker', config.LOG_LEVEL), worker.close);
