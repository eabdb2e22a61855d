/** The knowledge service's public surface for the other packages: its module, configuration, collections and migrations. */
export { knowledgeModule } from './module.js';
export { knowledgeConfigSchema, loadKnowledgeConfig, type KnowledgeConfig } from './config.js';
export { COLLECTIONS, type Collection } from './types.js';
export { migrations as knowledgeMigrations } from '../migrations/index.js';
