/**
 * Pull adapters: how a provider's records are read, page by page, into the AR ledger.
 *
 * An adapter is pure I/O against the provider's documented API plus a field mapping; the sync
 * activity (activities/sync.ts) owns the transactions, the heartbeats and the sync-run records.
 * Providers without an entry in PULL_ADAPTERS cannot sync (the API answers 409 and no Schedule is
 * created for them).
 */
import type { OutboundPolicy } from '@rp/platform';
import type { DocumentUpsert, PartnerUpsert } from '../types.js';

/** What the adapter needs to call the provider (from connection-auth's getProviderAccess). */
export interface ProviderAccess {
  accessToken: string;
  realmId?: string;
  apiBaseUrl: string;
  /** What the adapter's requests may reach (OUTBOUND_ALLOWLIST): every call goes through the provider client (adapters/provider-client.ts). */
  outbound: OutboundPolicy;
}

/** Opaque to the sync machinery; stored in sync_runs.pagination_state and heartbeated. */
export type PaginationState = Record<string, unknown>;

export interface SyncWindow {
  /** ISO time; null for an initial sync (everything). */
  start: string | null;
  /**
   * ISO time the sync started; the next sync's `start`. An adapter may also read records changed
   * after it (QuickBooks reads up to the moment it reads: a record changed during the sync is read
   * at its new position rather than skipped); the next sync reads them again, which is harmless.
   */
  end: string;
}

export type PulledRecords = { type: 'partners'; rows: PartnerUpsert[] } | { type: 'documents'; rows: DocumentUpsert[] };

export type DocumentKind = DocumentUpsert['kind'];

export interface PulledPage {
  records: PulledRecords;
  /** Documents of this kind the source reports deleted (by remote id): closed in the ledger with the page. */
  deletions?: { kind: DocumentKind; remoteIds: string[] };
  /**
   * Only on the last page of a read that returned every live record of the model: the origin's
   * documents of this kind that the run did not write are gone from the source and are closed with
   * the page (how deletions arrive when no change feed covers the window).
   */
  sweep?: { kind: DocumentKind };
  /** Where the page after this one starts; null when this was the last page. */
  next: PaginationState | null;
}

export interface PullModel {
  /** connection_models.name */
  name: string;
  display_name: string;
}

export interface PullAdapter {
  providerName: string;
  /** Models in sync order (partners before the documents that reference them). */
  models: readonly PullModel[];
  /** The first page's state (the adapter may settle the details on its first page, from the window). */
  initialState(): PaginationState;
  fetchPage(access: ProviderAccess, model: string, window: SyncWindow, state: PaginationState, opts: { signal?: AbortSignal }): Promise<PulledPage>;
}

export type ProviderErrorKind = 'authentication_required' | 'rate_limited' | 'unreachable' | 'server_error' | 'rejected' | 'misconfigured';

/** A provider call that failed; `kind` matches the health status codes of the connection. */
export class ProviderApiError extends Error {
  readonly kind: ProviderErrorKind;
  readonly httpStatus: number | null;
  readonly retryAfterSeconds: number | null;
  constructor(kind: ProviderErrorKind, message: string, opts: { httpStatus?: number | null; retryAfterSeconds?: number | null } = {}) {
    super(message);
    this.name = 'ProviderApiError';
    this.kind = kind;
    this.httpStatus = opts.httpStatus ?? null;
    this.retryAfterSeconds = opts.retryAfterSeconds ?? null;
  }

  /** Whether trying the same call again later can succeed. */
  get retryable(): boolean {
    return this.kind === 'rate_limited' || this.kind === 'unreachable' || this.kind === 'server_error';
  }
}
