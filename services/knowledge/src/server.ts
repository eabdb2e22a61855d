import { createLogger, onShutdown, startServiceApi } from '@rp/platform';
import { knowledgeModule } from './module.js';
import { loadKnowledgeConfig } from './config.js';

const config = loadKnowledgeConfig();
const api = await startServiceApi(knowledgeModule, config, { port: config.PORT, host: process.env.HOST });
onShutdown(createLogger('knowledge-api', config.LOG_LEVEL), api.close);
