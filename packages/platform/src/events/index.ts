/** Events: the catalogue, recording in the change's transaction, and reading for the event log and webhook delivery. */
export * from './catalogue.js';
export * from './table.js';
export * from './record.js';
export * from './read.js';
export * from './declare.js';
export * from './schema.js';
export * from './retention.js';
