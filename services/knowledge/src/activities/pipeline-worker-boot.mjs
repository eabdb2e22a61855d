// Entry of a pipeline worker thread (see pipeline-pool.ts): loads the TypeScript worker module through
// tsx (services run TypeScript with tsx; Node 20 worker threads do not inherit `--import tsx`), or a
// compiled .js entry directly, and hands piscina its task function.
import { workerData } from 'node:worker_threads';

const entry = workerData.entry;
const mod = entry.endsWith('.ts') ? await (await import('tsx/esm/api')).tsImport(entry, import.meta.url) : await import(entry);

export default mod.runPipelineTask;
