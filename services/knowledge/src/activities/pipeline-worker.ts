/**
 * The pipeline pool's worker module (see pipeline-pool.ts), run on the kernel's worker threads: one
 * CPU-heavy step of the extraction pipeline per operation, off the activity's event loop. An
 * unreadable source crosses the thread boundary marked (`kind`), so the pool rethrows it as
 * SourceReadError; a limit crosses with its `code` (ExtractionLimitError).
 */
import * as pipeline from './pipeline.js';

/** A SourceReadError as it crosses threads: its class does not survive structured cloning, this mark does. */
class UnreadableSource extends Error {
  override readonly name = 'SourceReadError';
  readonly kind = 'unreadable';
}

/** `step` with an unreadable source marked for the pool. */
function marked<A extends unknown[], R>(step: (...args: A) => Promise<R> | R): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await step(...args);
    } catch (err) {
      if (err instanceof pipeline.SourceReadError) throw new UnreadableSource(err.message);
      throw err;
    }
  };
}

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

export const ops = { ...PIPELINE_OPS, extractPages: marked(pipeline.extractPages) } as PipelineOps;
