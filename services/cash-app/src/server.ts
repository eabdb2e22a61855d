import { createLogger, onShutdown, startServiceApi } from '@rp/platform';
import { cashAppModule } from './module.js';
import { loadCashAppConfig } from './config.js';

const config = loadCashAppConfig();
const api = await startServiceApi(cashAppModule, config, { port: config.PORT, host: process.env.HOST });
onShutdown(createLogger('cash-app-api', config.LOG_LEVEL), api.close);
