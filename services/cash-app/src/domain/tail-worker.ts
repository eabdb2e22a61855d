/** A tail-pool worker thread: computes one bounded tail probability per message (see tail-pool.ts). */
import { parentPort } from 'node:worker_threads';
import { tailEstimate } from './tail-probability.js';
import type { TailJobMessage, TailJobReply } from './tail-pool.js';

const port = parentPort!;
port.on('message', (m: TailJobMessage) => {
  let reply: TailJobReply;
  try {
    const r = tailEstimate({ decided: null, threshold: m.threshold, cents: m.cents, p: m.p }, { maxStates: m.maxStates });
    reply = { id: m.id, ok: true, ...r };
  } catch (err) {
    reply = { id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
