/**
 * The retry policy of every workflow's activities (present and future): infrastructure outages never
 * fail business work, business errors fail at once.
 *
 * - Infrastructure errors (PostgreSQL restarting or unreachable, connections reset, serialization
 *   failures, Temporal unavailable) reach Temporal as retryable `TransientInfraError`s (the kernel's
 *   classifyActivityErrors, applied to every worker). They are retried with exponential backoff
 *   capped at 30 s and WITHOUT an attempt cap, bounded by `scheduleToCloseTimeout` = one attempt's
 *   `startToCloseTimeout` + the retry window (default 30 minutes: a routine restart of PostgreSQL or
 *   Temporal takes seconds to minutes).
 * - Business errors are thrown by the activity as non-retryable ApplicationFailures (nonRetryable, or
 *   a type listed in `nonRetryableErrorTypes`, e.g. `BusinessError`, `StatementParseError`).
 * - External systems with a deliberate attempt cap (SMTP servers, ERPs) keep their cap, enforced by
 *   the activity (the kernel's capExternalFailure): the policy itself has no attempt cap, so a
 *   database outage can never use up those attempts.
 *
 * The window is configurable without touching determinism: whoever starts a workflow passes
 * `retryWindowMinutes` in its input (services read ACTIVITY_RETRY_WINDOW_MINUTES, see the kernel's
 * activityRetryWindowMinutes); the value is recorded in the history, so a replay computes the same
 * options. Workflows import this module (only @temporalio/workflow types).
 */
import type { ActivityCancellationType, ActivityOptions } from '@temporalio/workflow';

/** Default retry window for infrastructure outages, beyond one attempt's own timeout. */
export const DEFAULT_RETRY_WINDOW_MINUTES = 30;

/** Longest pause between two attempts (backoff cap). */
export const MAXIMUM_RETRY_INTERVAL = '30 seconds';

/** Failure type of a business error an activity refuses for good (never retried). */
export const BUSINESS_ERROR = 'BusinessError';

/** Failure type the kernel gives infrastructure outages (retried; its message is technical, never shown to users). */
export const TRANSIENT_INFRA_ERROR = 'TransientInfraError';

/** Failure type the kernel gives an activity's unexpected error once its attempts are used up (a defect; technical message). */
export const UNEXPECTED_ERROR = 'UnexpectedError';

/** Every workflow input may carry the window (minutes) its activities ride out outages for. */
export interface RetryWindowInput {
  /** Minutes an activity keeps retrying infrastructure outages (default DEFAULT_RETRY_WINDOW_MINUTES). */
  retryWindowMinutes?: number;
}

type Duration = `${number} ${'second' | 'seconds' | 'minute' | 'minutes' | 'hour' | 'hours'}`;

function durationMs(d: Duration): number {
  const [n, unit] = d.split(' ') as [string, string];
  const factor = unit.startsWith('hour') ? 3_600_000 : unit.startsWith('minute') ? 60_000 : 1000;
  return Number(n) * factor;
}

export interface ActivityOptionsInput {
  startToCloseTimeout: Duration;
  heartbeatTimeout?: Duration;
  cancellationType?: ActivityCancellationType;
  taskQueue?: string;
  /** Business error types besides BUSINESS_ERROR that are never retried. */
  nonRetryableErrorTypes?: string[];
  /** First backoff interval (default 1 second). */
  initialInterval?: Duration;
  /** Backoff cap (default MAXIMUM_RETRY_INTERVAL); an external system's deliberate policy may use a longer one. */
  maximumInterval?: Duration;
  /** From the workflow input (RetryWindowInput); default DEFAULT_RETRY_WINDOW_MINUTES. */
  retryWindowMinutes?: number;
  /** Extra minutes on top of the window (an external system's own retry budget, e.g. SMTP backoff). */
  extraWindowMinutes?: number;
}

/** Activity options under the platform's retry policy (see the module comment). */
export function activityOptions(opts: ActivityOptionsInput): ActivityOptions {
  const window = opts.retryWindowMinutes && opts.retryWindowMinutes > 0 ? opts.retryWindowMinutes : DEFAULT_RETRY_WINDOW_MINUTES;
  const scheduleToClose = durationMs(opts.startToCloseTimeout) + (window + (opts.extraWindowMinutes ?? 0)) * 60_000;
  return {
    ...(opts.taskQueue ? { taskQueue: opts.taskQueue } : {}),
    startToCloseTimeout: opts.startToCloseTimeout,
    scheduleToCloseTimeout: scheduleToClose,
    ...(opts.heartbeatTimeout ? { heartbeatTimeout: opts.heartbeatTimeout } : {}),
    ...(opts.cancellationType !== undefined ? { cancellationType: opts.cancellationType } : {}),
    retry: {
      initialInterval: opts.initialInterval ?? '1 second',
      backoffCoefficient: 2,
      maximumInterval: opts.maximumInterval ?? MAXIMUM_RETRY_INTERVAL,
      // no maximumAttempts: bounded by scheduleToCloseTimeout
      nonRetryableErrorTypes: [BUSINESS_ERROR, ...(opts.nonRetryableErrorTypes ?? [])],
    },
  };
}

interface FailureLike {
  name?: string;
  message?: string;
  type?: string | null;
  nonRetryable?: boolean;
  cause?: unknown;
}

/**
 * What a workflow stores for users when an activity gave up: the message of a business error (an
 * ApplicationFailure the activity threw non-retryable, or of a type in `userWorded`: failures whose
 * messages are written for users, such as a provider's answer), else `fallback` — never the
 * technical text of an outage ("connect ECONNREFUSED 127.0.0.1:5433"), which stays in the Temporal
 * failure and the worker's log.
 */
export function userFacingFailure(err: unknown, fallback: string, userWorded: readonly string[] = []): string {
  let e = err as FailureLike | undefined;
  // ActivityFailure → its cause (the activity's ApplicationFailure, or a TimeoutFailure when the window ran out)
  while (e && e.name === 'ActivityFailure' && e.cause) e = e.cause as FailureLike;
  const technical = e?.type === TRANSIENT_INFRA_ERROR || e?.type === UNEXPECTED_ERROR;
  if (e && e.name === 'ApplicationFailure' && !technical && (e.nonRetryable || (e.type && userWorded.includes(e.type)))) {
    return e.message ?? fallback;
  }
  return fallback;
}
