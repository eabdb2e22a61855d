export { startGateway, type Gateway } from './app.js';
export { gatewayConfigSchema, loadGatewayConfig, type GatewayConfig } from './config.js';
export { ROUTE_TABLE, serviceFor, type ServiceName } from './route-table.js';
