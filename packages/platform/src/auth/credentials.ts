import pg from 'pg';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Db } from '../db.js';
import { hashToken, type CredentialKind } from './tokens.js';
import { awaitBarrier, type ChangeChannel } from './change-channel.js';

/**
 * The one read module for bearer credentials (owned by the admin service's schema). The gateway
 * resolves tokens through it, with a cache that is invalidated within moments through Postgres
 * LISTEN/NOTIFY whenever the admin service revokes a credential or changes a user's access.
 */
export const AUTH_CHANNEL = 'rp_auth_changed';
export const ADMIN_SCHEMA = 'admin';

export interface AuthChange {
  credential_id?: string;
  user_id?: string;
  organization_id?: string;
  created?: boolean;
  /** a user's out-of-office coverage changed (read caches of user details drop the user; credentials are unaffected) */
  coverage_user_id?: string;
  /** a gateway's own sync marker (CredentialResolver.sync); other listeners ignore it */
  barrier?: string;
}

/** Writers call this inside their transaction: listeners hear it only if the transaction commits. */
export async function notifyAuthChanged(trx: Knex | Knex.Transaction, change: AuthChange): Promise<void> {
  await trx.raw('SELECT pg_notify(?, ?)', [AUTH_CHANNEL, JSON.stringify(change)]);
}

/** The auth channel as a change channel: JSON `AuthChange` payloads, `{"barrier": id}` its sync markers. */
export const AUTH_CHANGES: ChangeChannel<AuthChange> = {
  name: AUTH_CHANNEL,
  read(payload) {
    let change: AuthChange | null;
    try {
      change = JSON.parse(payload) as AuthChange | null;
    } catch {
      return null;
    }
    if (typeof change !== 'object' || change === null) return null;
    return change.barrier ? { barrier: change.barrier } : { change };
  },
  marker: (id) => JSON.stringify({ barrier: id } satisfies AuthChange),
};

/**
 * Sends a marker NOTIFY on the auth channel and waits until this process's listener hears it: every
 * change committed before the call has then been heard (Postgres delivers notifications in commit
 * order). False when the marker was not heard within `timeoutMs` or could not be sent: the caller
 * then empties its cache.
 */
export function awaitAuthBarrier(db: Knex, barriers: Map<string, () => void>, timeoutMs: number): Promise<boolean> {
  return awaitBarrier(db, AUTH_CHANGES, barriers, timeoutMs);
}

export interface ResolvedCredential {
  credentialId: string;
  organizationId: string;
  kind: CredentialKind;
  userId: string | null;
  role: 'admin' | 'member' | null;
  businessUnits: '*' | string[];
  /** permissions granted to the user (members; admins hold all implicitly, API keys none) */
  permissions: string[];
  expiresAt: number | null;
}

export type Resolution = { status: 'ok'; credential: ResolvedCredential } | { status: 'unknown' } | { status: 'expired' };

interface Entry {
  value: ResolvedCredential | null;
  until: number;
}

export interface CredentialResolverOptions {
  db: Db;
  databaseUrl: string;
  log: Logger;
  cacheTtlMs?: number;
  negativeTtlMs?: number;
  maxEntries?: number;
  /** Called for every credential look-up that reaches the database (the gateway counts them in /metrics). */
  onLookup?: () => void;
}

export class CredentialResolver {
  private readonly cache = new Map<string, Entry>();
  private listener: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private readonly ttl: number;
  private readonly negativeTtl: number;
  private readonly maxEntries: number;
  private readonly barriers = new Map<string, () => void>();

  constructor(private readonly opts: CredentialResolverOptions) {
    this.ttl = opts.cacheTtlMs ?? 60_000;
    this.negativeTtl = opts.negativeTtlMs ?? 5_000;
    this.maxEntries = opts.maxEntries ?? 50_000;
  }

  /** Start listening for invalidations. Until this succeeds the cache is not used. */
  async start(): Promise<void> {
    await this.connectListener();
  }

  private async connectListener(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.opts.databaseUrl, application_name: 'gateway-auth-listener' });
    client.on('notification', (msg) => this.onNotification(msg.payload));
    client.on('error', (err) => {
      this.opts.log.warn({ err }, 'auth listener lost; cache disabled until it reconnects');
      this.listening = false;
      this.cache.clear();
      client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.connectListener().catch(() => {}), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${AUTH_CHANNEL}`);
      this.listener = client;
      this.cache.clear();
      this.listening = true;
    } catch (err) {
      this.opts.log.warn({ err }, 'auth listener could not connect; retrying');
      await client.end().catch(() => {});
      if (!this.closed) setTimeout(() => void this.connectListener().catch(() => {}), 1000).unref();
    }
  }

  private onNotification(payload: string | undefined): void {
    const heard = AUTH_CHANGES.read(payload ?? '{}');
    if (!heard) {
      this.cache.clear();
      return;
    }
    if ('barrier' in heard) {
      this.barriers.get(heard.barrier)?.();
      return;
    }
    const change = heard.change;
    for (const [key, entry] of this.cache) {
      const v = entry.value;
      if (v === null) {
        if (change.created) this.cache.delete(key);
        continue;
      }
      if (
        (change.credential_id && v.credentialId === change.credential_id) ||
        (change.user_id && v.userId === change.user_id) ||
        (change.organization_id && v.organizationId === change.organization_id)
      ) {
        this.cache.delete(key);
      }
    }
  }

  /**
   * Resolves once this process's listener has applied every invalidation committed before the call:
   * a marker NOTIFY is sent and awaited (Postgres delivers notifications in commit order). The gateway
   * calls it before answering a successful write to the admin service, so a deactivation, a revocation
   * or an access change applies to the caller's very next request through this gateway (others hear
   * it within moments). Without a listener the cache is bypassed anyway; after `timeoutMs` without the
   * marker the cache is cleared instead.
   */
  async sync(timeoutMs = 2000): Promise<void> {
    if (!this.listening) return;
    if (!(await awaitAuthBarrier(this.opts.db, this.barriers, timeoutMs))) this.cache.clear();
  }

  async resolve(token: string, now = Date.now()): Promise<Resolution> {
    const hash = hashToken(token);
    let entry = this.listening ? this.cache.get(hash) : undefined;
    if (!entry || entry.until < now) {
      const value = await this.lookup(hash);
      entry = { value, until: now + (value ? this.ttl : this.negativeTtl) };
      if (this.listening) {
        if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
        this.cache.set(hash, entry);
      }
    }
    if (!entry.value) return { status: 'unknown' };
    if (entry.value.expiresAt !== null && entry.value.expiresAt <= now) return { status: 'expired' };
    return { status: 'ok', credential: entry.value };
  }

  /** The cached answer for a token without touching the database; null when not cached. */
  cached(token: string, now = Date.now()): Resolution | null {
    const entry = this.listening ? this.cache.get(hashToken(token)) : undefined;
    if (!entry || entry.until < now) return null;
    if (!entry.value) return { status: 'unknown' };
    if (entry.value.expiresAt !== null && entry.value.expiresAt <= now) return { status: 'expired' };
    return { status: 'ok', credential: entry.value };
  }

  private async lookup(hash: string): Promise<ResolvedCredential | null> {
    this.opts.onLookup?.();
    const db = this.opts.db;
    const row = await db
      .withSchema(ADMIN_SCHEMA)
      .from('credentials as c')
      .leftJoin('users as u', 'u.id', 'c.user_id')
      .where('c.token_hash', hash)
      .whereNull('c.revoked_at')
      .first(
        'c.id',
        'c.organization_id',
        'c.kind',
        'c.user_id',
        'c.expires_at',
        'u.role',
        'u.deactivated_at',
        db.raw(
          `(SELECT coalesce(array_agg(ubu.business_unit_id ORDER BY ubu.business_unit_id), '{}') FROM ${ADMIN_SCHEMA}.user_business_units ubu WHERE ubu.user_id = c.user_id) AS business_unit_ids`,
        ),
        db.raw(
          `(SELECT coalesce(array_agg(up.permission ORDER BY up.permission), '{}') FROM ${ADMIN_SCHEMA}.user_permissions up WHERE up.user_id = c.user_id) AS permissions`,
        ),
      );
    if (!row) return null;
    if (row.kind === 'user' && (!row.user_id || row.deactivated_at)) return null;
    const role = row.kind === 'user' ? (row.role as 'admin' | 'member') : null;
    return {
      credentialId: row.id,
      organizationId: row.organization_id,
      kind: row.kind,
      userId: row.user_id ?? null,
      role,
      businessUnits: row.kind === 'api_key' || role === 'admin' ? '*' : (row.business_unit_ids as string[]),
      permissions: role === 'member' ? (row.permissions as string[]) : [],
      expiresAt: row.expires_at ? new Date(row.expires_at).getTime() : null,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    await this.listener?.end().catch(() => {});
  }
}
