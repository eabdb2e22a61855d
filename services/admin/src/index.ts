/** The admin service's public entry: its module (routes, migrations, activities). */
export { adminModule } from './module.js';
export { adminConfigSchema, loadAdminConfig, type AdminConfig } from './config.js';
export { onboardOrganization, createUser } from './domain/accounts.js';
export { migrations as adminMigrations } from '../migrations/index.js';
