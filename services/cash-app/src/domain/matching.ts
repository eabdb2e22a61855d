/** Automatic matching: the engine lives in ./matching/ (see its index.ts); this path stays for its callers. */
export * from './matching/index.js';
