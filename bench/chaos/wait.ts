/** Waiting in the fault-injection suite: a pause, and polling a probe until it holds or a deadline passes. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Thrown inside a `waitFor` probe: stop waiting at once (e.g. the launcher is gone). */
export class Fatal extends Error {}

/** Poll `fn` until it returns a truthy value; after `timeoutMs` throw `what` (a clear message). */
export async function waitFor<T>(what: string, timeoutMs: number, fn: () => Promise<T | null | undefined | false>, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let v: T | null | undefined | false = null;
    try {
      v = await fn();
    } catch (err) {
      if (err instanceof Fatal) throw err; // otherwise: not yet
    }
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s: ${what}`);
    await sleep(everyMs);
  }
}
