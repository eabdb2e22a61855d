export { startGateway, type Gateway } from './app.js';
export { gatewayConfigSchema, loadGatewayConfig, type GatewayConfig } from './config.js';
export { ROUTE_TABLE, serviceFor, type ServiceName } from './route-table.js';
export { gatewayOpenApi, UPLOAD_PATHS } from './openapi.js';
export { SWAGGER_UI_VERSION, DOCS_ASSET_PREFIX } from './docs.js';
