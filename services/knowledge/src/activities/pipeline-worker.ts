/**
 * A pipeline worker thread (see pipeline-pool.ts): runs one CPU-heavy step of the extraction pipeline
 * per task, off the activity's event loop. Errors travel back as data (a structured clone keeps no
 * error class), so the pool rethrows the pipeline's own error types.
 */
import { ExtractionLimitError, type LimitCode } from '../extraction/types.js';
import * as pipeline from './pipeline.js';

export const PIPELINE_OPS = {
  extractPages: pipeline.extractPages,
  splitMemories: pipeline.splitMemories,
  dedupeMemories: pipeline.dedupeMemories,
  enrichMemories: pipeline.enrichMemories,
  synthesizeProposals: pipeline.synthesizeProposals,
  synthesisProposals: pipeline.synthesisProposals,
};
export type PipelineOps = typeof PIPELINE_OPS;
export type PipelineOp = keyof PipelineOps;

export interface PipelineTask {
  op: PipelineOp;
  args: unknown[];
}

export type PipelineReply =
  | { ok: true; value: unknown }
  | { ok: false; kind: 'limit'; code: LimitCode; message: string }
  | { ok: false; kind: 'unreadable' | 'other'; message: string };

export async function runPipelineTask(task: PipelineTask): Promise<PipelineReply> {
  try {
    const fn = PIPELINE_OPS[task.op] as (...args: unknown[]) => unknown;
    return { ok: true, value: await fn(...task.args) };
  } catch (err) {
    if (err instanceof ExtractionLimitError) return { ok: false, kind: 'limit', code: err.code, message: err.message };
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, kind: err instanceof pipeline.SourceReadError ? 'unreadable' : 'other', message };
  }
}
