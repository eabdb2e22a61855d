import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';

/** Default time between two heartbeats of a long step (see heartbeatPacer). */
export const HEARTBEAT_EVERY_MS = 500;

export function throwIfCancelled(ctx: Context): void {
  if (ctx.cancellationSignal.aborted) {
    const r: unknown = ctx.cancellationSignal.reason;
    throw r instanceof CancelledFailure ? r : new CancelledFailure(r instanceof Error ? r.message : 'cancelled');
  }
}

/**
 * For activities whose steps are long CPU work (parsing a file, building a matching context): call
 * the returned function between small batches of work. Every `everyMs` it heartbeats `details()` and
 * rethrows a cancellation the heartbeat brought; every call lets the event loop turn, so the worker
 * actually sends the heartbeat (the SDK sends them from the event loop; a synchronous loop of several
 * seconds would starve them and the activity would time out) and timers run. The first heartbeat is due
 * `firstAfterMs` after the pacer is made. `ctx` null (outside an activity) only yields.
 */
export function heartbeatPacer(ctx: Context | null, details: () => unknown, everyMs = HEARTBEAT_EVERY_MS, firstAfterMs = everyMs): () => Promise<void> {
  let last = Date.now() + firstAfterMs - everyMs;
  return async () => {
    if (ctx && Date.now() - last >= everyMs) {
      last = Date.now();
      ctx.heartbeat(details());
      throwIfCancelled(ctx);
    }
    await nextTurn();
  };
}
