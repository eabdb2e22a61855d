import { createLogger, onShutdown } from '@rp/platform';
import { startGateway } from './app.js';
import { loadGatewayConfig } from './config.js';

const config = loadGatewayConfig();
const gateway = await startGateway(config);
onShutdown(createLogger('api-gateway', config.LOG_LEVEL), gateway.close);
