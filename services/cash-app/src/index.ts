export { cashAppModule } from './module.js';
export { cashAppConfigSchema, loadCashAppConfig, type CashAppConfig } from './config.js';
export { SYSTEM_ADJUSTMENTS, ensureSystemAdjustments } from './domain/system-adjustments.js';
export { migrations as cashAppMigrations } from '../migrations/index.js';
