/** Cash-application helpers for end-to-end tests. */
import type { TestStack } from './stack.js';

/**
 * Poll `GET /v2/bank-statements/{id}` until its processing workflow brings the statement to one of
 * `statuses` (default `ready`) and return the statement with its transactions. A statement that
 * ends `failed` when that was not asked for, or a timeout, throws with the statement's body.
 */
export async function waitForStatement(
  stack: TestStack,
  token: string,
  id: string,
  opts: { statuses?: string[]; timeoutMs?: number } = {},
): Promise<any> {
  const statuses = opts.statuses ?? ['ready'];
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    const res = await stack.request('GET', `/v2/bank-statements/${id}`, { token });
    const status = res.body?.status;
    if (statuses.includes(status)) return res.body;
    if (status === 'failed' || Date.now() > deadline) {
      throw new Error(`statement ${id} did not reach ${statuses.join('/')}: ${JSON.stringify(res.body).slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
}
