export { knowledgeModule } from './module.js';
export { knowledgeConfigSchema, loadKnowledgeConfig, type KnowledgeConfig } from './config.js';
export { COLLECTIONS, type Collection } from './domain/collections.js';
export { migrations as knowledgeMigrations } from '../migrations/index.js';
