import { createLogger, onShutdown, startServiceApi } from '@rp/platform';
import { adminModule } from './module.js';
import { loadAdminConfig } from './config.js';

const config = loadAdminConfig();
const api = await startServiceApi(adminModule, config, { port: config.PORT, host: process.env.HOST });
onShutdown(createLogger('admin-api', config.LOG_LEVEL), api.close);
