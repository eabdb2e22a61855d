// Entry of a template-pool worker thread (see template-pool.ts): loads the TypeScript worker module
// through tsx (the services run TypeScript with tsx, and Node 20 worker threads do not inherit
// `--import tsx`), or a compiled .js entry directly.
import { workerData } from 'node:worker_threads';

const entry = workerData.entry;
if (entry.endsWith('.ts')) {
  const { tsImport } = await import('tsx/esm/api');
  await tsImport(entry, import.meta.url);
} else {
  await import(entry);
}
