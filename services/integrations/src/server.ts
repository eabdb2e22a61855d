import { createLogger, onShutdown, startServiceApi } from '@rp/platform';
import { integrationsModule } from './module.js';
import { loadIntegrationsConfig } from './config.js';

const config = loadIntegrationsConfig();
const api = await startServiceApi(integrationsModule, config, { port: config.PORT, host: process.env.HOST });
onShutdown(createLogger('integrations-api', config.LOG_LEVEL), api.close);
