/** The tail pool's worker module (see tail-pool.ts): one bounded tail probability per operation, on a kernel worker thread. */
import { tailEstimate, type TailEstimate } from './tail-probability.js';

export const ops = {
  estimate(threshold: number, cents: Float64Array, p: Float64Array, maxStates: number): TailEstimate {
    return tailEstimate({ decided: null, threshold, cents, p }, { maxStates });
  },
};
