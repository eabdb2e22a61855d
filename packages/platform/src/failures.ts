import { ApplicationFailure, TemporalFailure } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Which failures are transient infrastructure failures — the database, Temporal or the network
 * briefly unavailable — as opposed to business errors or defects. One classification for the whole
 * platform: the HTTP error middleware answers them 503 `service-unavailable` with `Retry-After`, and
 * activities let them be retried (within the workflow's retry window) instead of failing business work.
 */

/** Node socket errors of a connection that was refused, reset, timed out or could not be routed (for now). */
const TRANSIENT_SYSCALL_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/**
 * PostgreSQL SQLSTATEs that clear up on their own: connection exceptions (class 08), server shutting
 * down or starting (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now), too many
 * connections (53300), serialization failure (40001) and deadlock (40P01).
 */
const TRANSIENT_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);

/** gRPC status codes of a Temporal call that did not reach a healthy frontend: UNAVAILABLE (14), DEADLINE_EXCEEDED (4). */
const TRANSIENT_GRPC_CODES = new Set([14, 4]);

/** Messages of the pg driver and knex pool when the server went away or no connection could be had. */
const TRANSIENT_MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/i,
  /timeout exceeded when trying to connect/i,
  /Timeout acquiring a connection/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /terminating connection due to administrator command/i,
  /Failed to connect before the deadline/i,
  // the server's statement_timeout (57014; the same SQLSTATE for a user's cancel is not an outage)
  /canceling statement due to statement timeout/i,
];

/** DatabaseDeadlineError: a statement PostgreSQL did not answer within the deadline (db.ts). */
const TRANSIENT_NAMES = new Set(['KnexTimeoutError', 'TransportError', 'DatabaseDeadlineError']);

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function isTransientOne(e: ErrorLike): boolean {
  const code = e.code;
  if (typeof code === 'string') {
    if (TRANSIENT_SYSCALL_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && (code.startsWith('08') || TRANSIENT_SQLSTATES.has(code))) return true;
  }
  if (typeof code === 'number' && TRANSIENT_GRPC_CODES.has(code) && 'details' in e) return true;
  if (typeof e.name === 'string' && TRANSIENT_NAMES.has(e.name)) return true;
  const message = typeof e.message === 'string' ? e.message : '';
  // Temporal's client wraps gRPC errors: "14 UNAVAILABLE: …", "4 DEADLINE_EXCEEDED: …"
  if (/^(14 UNAVAILABLE|4 DEADLINE_EXCEEDED)\b/.test(message)) return true;
  return TRANSIENT_MESSAGES.some((re) => re.test(message));
}

/**
 * True when `err` — or anything it wraps (`cause`, AggregateError `errors`) — says a dependency is
 * unavailable for now: connection refused/reset/timed out, PostgreSQL restarting (57P01, 57P03,
 * class 08), a serialization failure or deadlock (40001, 40P01), the knex pool timing out, a
 * statement past its deadline (statement_timeout, or no answer at all: DatabaseDeadlineError), or a
 * Temporal call answered UNAVAILABLE / DEADLINE_EXCEEDED. Business errors and defects are false.
 */
export function isTransientInfraError(err: unknown): boolean {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const like = e as ErrorLike;
    if (isTransientOne(like)) return true;
    if (like.cause) queue.push(like.cause);
    if (Array.isArray(like.errors)) queue.push(...like.errors);
  }
  return false;
}

/** Seconds a client is told to wait (`Retry-After`) before retrying a call that met an outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/**
 * Failure type of an activity error that is an infrastructure outage (see `classifyActivityErrors`).
 * Retried by every workflow within its retry window (workflows/src/activity-options.ts); its message
 * is technical and is never stored for users.
 */
export const TRANSIENT_INFRA_FAILURE = 'TransientInfraError';

/** Attempts an activity gets for an unexpected error (neither a declared failure nor an outage: a defect, most likely). */
export const UNEXPECTED_ERROR_ATTEMPTS = 5;

/**
 * How an activity's error reaches Temporal. Failures the activity chose (ApplicationFailure: a
 * business error thrown non-retryable, or an external system's failure of a named type) and
 * cancellations pass as they are; a transient infrastructure error becomes a retryable
 * `TransientInfraError` (its technical message stays in the Temporal failure and the logs), retried
 * for the workflow's retry window; any other error (a defect, most likely) is retried like before,
 * UNEXPECTED_ERROR_ATTEMPTS attempts in all, then fails as non-retryable `UnexpectedError` rather
 * than spinning for the whole window.
 */
export function toActivityFailure(err: unknown, attempt: number): unknown {
  if (err instanceof TemporalFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? err : undefined;
  if (isTransientInfraError(err)) return ApplicationFailure.create({ type: TRANSIENT_INFRA_FAILURE, message, nonRetryable: false, cause });
  if (attempt >= UNEXPECTED_ERROR_ATTEMPTS) return ApplicationFailure.create({ type: 'UnexpectedError', message, nonRetryable: true, cause });
  return err;
}

/**
 * Worker interceptor putting every activity's errors through `toActivityFailure`: the one place that
 * makes infrastructure outages retryable for every present and future activity (startServiceWorker
 * installs it).
 */
export const classifyActivityErrors: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      try {
        return await next(input);
      } catch (err) {
        throw toActivityFailure(err, ctx.info.attempt);
      }
    },
  },
});

/**
 * An external system's deliberate attempt cap (an SMTP server, an ERP) enforced by the activity, not
 * by the retry policy: the policy retries without an attempt cap so a database outage can never use
 * the attempts up. A retryable ApplicationFailure of the external system on attempt `attempt` ≥
 * `maxAttempts` is returned non-retryable (same type and message); infrastructure failures and
 * anything else are returned unchanged. Attempts that an outage of our own infrastructure failed
 * still count toward the cap, but never end the activity by themselves.
 */
export function capExternalFailure(err: unknown, attempt: number, maxAttempts: number): unknown {
  if (!(err instanceof ApplicationFailure) || err.nonRetryable || err.type === TRANSIENT_INFRA_FAILURE || attempt < maxAttempts) return err;
  return ApplicationFailure.create({ type: err.type ?? 'ExternalFailure', message: err.message, nonRetryable: true, details: err.details as unknown[] | undefined, cause: err.cause });
}

/**
 * Minutes every workflow's activities ride out infrastructure outages (ACTIVITY_RETRY_WINDOW_MINUTES,
 * default 30). Read by the code that starts a workflow, outside it, and passed in the workflow's input
 * (`retryWindowMinutes`), where the history records it: replays compute the same activity options.
 */
export function activityRetryWindowMinutes(env: Record<string, string | undefined> = process.env): number {
  const raw = env.ACTIVITY_RETRY_WINDOW_MINUTES?.trim();
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n >= 1 ? n : 30;
}

/** Longest a request waits for Temporal to start a workflow before it answers 503 (ms). */
export const WORKFLOW_START_DEADLINE_MS = 5000;

/**
 * Runs Temporal calls with a deadline: without one, the client retries an unavailable server for about
 * 20 s while the request hangs. With it, the call fails DEADLINE_EXCEEDED within `ms`, which the
 * error middleware answers 503 + Retry-After.
 */
export function withTemporalDeadline<T>(temporal: { connection: { withDeadline<R>(deadline: number | Date, fn: () => Promise<R>): Promise<R> } }, fn: () => Promise<T>, ms = WORKFLOW_START_DEADLINE_MS): Promise<T> {
  return temporal.connection.withDeadline(Date.now() + ms, fn);
}
