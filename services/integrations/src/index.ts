/**
 * What other packages may use of the integrations service: its module, config, provider registry and migrations.
 */
export { integrationsModule } from './module.js';
export { integrationsConfigSchema, loadIntegrationsConfig, type IntegrationsConfig } from './config.js';
export { PROVIDERS, PROVIDER_CATEGORIES, findProvider, type ProviderDescriptor } from './domain/providers.js';
export { migrations as integrationsMigrations } from '../migrations/index.js';
