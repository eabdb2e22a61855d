import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db.js';
import { awaitBarrier, type ChangeChannel } from './change-channel.js';

export interface ReadCacheOptions<V, C> {
  /** names the cache's listener connection (application_name) and its log lines */
  name: string;
  db: Db;
  databaseUrl: string;
  log: Logger;
  /** the safety net: an entry is read again after this long even without a change heard */
  ttlMs: number;
  maxEntries?: number;
  /** the channel on which every writer of the data announces its changes (e.g. AUTH_CHANGES) */
  channel: ChangeChannel<C>;
  /** whether a change announced on the channel makes the entry `key` (holding `value`) stale: it is then dropped */
  stale: (value: V, change: C, key: string) => boolean;
}

/**
 * A short-lived per-process cache of a read that repeats on every request (e.g. the caller's own
 * user record), kept true across processes by a change channel's LISTEN/NOTIFY (the auth channel,
 * auth/credentials.ts; the partner reads' channel, conditions/partner-detail.ts): every writer of the
 * data announces the change inside its transaction (in code or by a database trigger), so every
 * process hears it on commit and drops what it affects. While the listener is not connected
 * (starting, lost, reconnecting) the cache is bypassed and emptied; a read that began before a change
 * was heard is not stored (the generation check), so a stale answer is never cached after its
 * invalidation; `ttlMs` bounds what an unannounced change (one made by hand in SQL where no trigger
 * announces it) or a time-dependent answer (today's date) can serve.
 */
export class ReadCache<V, C> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private listener: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private generationCount = 0;
  private readonly barriers = new Map<string, () => void>();
  private readonly maxEntries: number;

  constructor(private readonly opts: ReadCacheOptions<V, C>) {
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** Starts listening for changes; until that succeeds (it retries in the background) the cache is bypassed. */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.opts.databaseUrl, application_name: `${this.opts.name}-listener` });
    client.on('notification', (msg) => this.heard(msg.payload));
    // A lost listener may have missed changes: everything cached is dropped and the cache is bypassed until it is back.
    const lost = (err: unknown) => {
      if (this.listener !== client) return;
      this.listener = null;
      this.reset();
      client.end().catch(() => {});
      if (!this.closed) {
        this.opts.log.warn({ err, cache: this.opts.name }, 'read-cache listener lost; cache bypassed until it reconnects');
        setTimeout(() => void this.connect().catch(() => {}), 1000).unref();
      }
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('listener connection ended')));
    try {
      await client.connect();
      await client.query(`LISTEN ${client.escapeIdentifier(this.opts.channel.name)}`);
      if (this.closed) {
        await client.end().catch(() => {});
        return;
      }
      this.listener = client;
      this.reset();
      this.listening = true;
    } catch (err) {
      this.opts.log.warn({ err, cache: this.opts.name }, 'read-cache listener could not connect; retrying');
      await client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.connect().catch(() => {}), 1000).unref();
    }
  }

  /** Empties the cache and stops using it (until the listener is back). */
  private reset(): void {
    this.listening = false;
    this.generationCount++;
    this.entries.clear();
  }

  private heard(payload: string | undefined): void {
    const heard = this.opts.channel.read(payload ?? '');
    if (!heard) this.clear();
    else if ('barrier' in heard) this.barriers.get(heard.barrier)?.();
    else this.forget(heard.change);
  }

  /**
   * Drops what `change` makes stale, as if it had been heard: a write route of this process calls it
   * once its change has committed, so its caller's next read here does not wait for the notification.
   */
  forget(change: C): void {
    this.generationCount++;
    for (const [key, entry] of this.entries) if (this.opts.stale(entry.value, change, key)) this.entries.delete(key);
  }

  /** Whether the listener is connected (otherwise the cache is bypassed). */
  get connected(): boolean {
    return this.listening;
  }

  /** Take this before the read whose answer may be stored; `set` ignores the answer if a change was heard since. */
  generation(): number {
    return this.generationCount;
  }

  get(key: string, now = Date.now()): V | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until < now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, generation: number, now = Date.now()): void {
    if (!this.listening || generation !== this.generationCount) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, until: now + this.opts.ttlMs });
  }

  /**
   * The entry `key` while `fresh` holds for it, else `load`'s answer, stored when it is a value that
   * `fresh` holds for, unless a change was heard while it loaded (a load that throws or answers
   * undefined stores nothing).
   */
  async through<R extends V | undefined>(key: string, load: () => Promise<R>, fresh: (value: V) => boolean = () => true): Promise<R | V> {
    const hit = this.get(key);
    if (hit !== undefined && fresh(hit)) return hit;
    const generation = this.generation();
    const value = await load();
    if (value !== undefined && fresh(value)) this.set(key, value, generation);
    return value;
  }

  clear(): void {
    this.generationCount++;
    this.entries.clear();
  }

  /**
   * Resolves once this process's listener has applied every change committed before the call (a marker
   * NOTIFY is sent and awaited; Postgres delivers notifications in commit order). A write route awaits it
   * before answering, so its caller's next request to this process already sees the change. Without a
   * listener the cache is bypassed anyway; without the marker in `timeoutMs` the cache is emptied instead.
   */
  async sync(timeoutMs = 2000): Promise<void> {
    if (!this.listening) return;
    if (!(await awaitBarrier(this.opts.db, this.opts.channel, this.barriers, timeoutMs))) this.clear();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reset();
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
  }
}
