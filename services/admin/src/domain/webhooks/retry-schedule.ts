/**
 * When a failed webhook delivery is tried again (spec §3 Delivery): the configured delays
 * (WEBHOOK_RETRY_DELAYS_SECONDS), one per retry; the first two exactly (the first retry within
 * 10 s, the second within 60 s of it), the later ones ±20 % so the retries of a burst spread out.
 * After the last delay's attempt the delivery has failed for good.
 */
export interface RetryDecision {
  final: boolean;
  retryInMs: number;
}

/** After attempt number `attempt` (1-based) failed. `random` is in [0, 1). */
export function nextRetry(delaysSeconds: readonly number[], attempt: number, random: () => number = Math.random): RetryDecision {
  if (attempt > delaysSeconds.length) return { final: true, retryInMs: 0 };
  const base = delaysSeconds[attempt - 1] * 1000;
  const jitter = attempt > 2 ? 1 + (random() * 0.4 - 0.2) : 1;
  return { final: false, retryInMs: Math.round(base * jitter) };
}
