/**
 * The pull adapters by provider name.
 */
import type { PullAdapter } from './adapter.js';
import { quickbooksOnlineAdapter } from './quickbooks-online.js';

export * from './adapter.js';

/** Providers whose records this platform can pull; every other provider has no sync. */
export const PULL_ADAPTERS: Readonly<Record<string, PullAdapter>> = {
  [quickbooksOnlineAdapter.providerName]: quickbooksOnlineAdapter,
};

export function pullAdapterFor(providerName: string): PullAdapter | null {
  return PULL_ADAPTERS[providerName] ?? null;
}
