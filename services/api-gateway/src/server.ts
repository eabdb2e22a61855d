import { runProcess } from '@rp/platform';
import { startGateway } from './app.js';
import { loadGatewayConfig } from './config.js';

await runProcess('api-gateway', async () => startGateway(loadGatewayConfig()));
