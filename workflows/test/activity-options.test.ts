// The shared activity retry policy and what workflows store for users when an activity gave up.
import { describe, expect, it } from 'vitest';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { activityOptions, BUSINESS_ERROR, DEFAULT_RETRY_WINDOW_MINUTES, TRANSIENT_INFRA_ERROR, UNEXPECTED_ERROR, userFacingFailure } from '../src/activity-options.js';

const failed = (cause: Error) => new ActivityFailure('activity failed', 'storeStatementTransactions', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, cause);

describe('activityOptions', () => {
  it('retries without an attempt cap, bounded by one attempt plus the retry window, backoff capped at 30 s', () => {
    const o = activityOptions({ startToCloseTimeout: '2 minutes', nonRetryableErrorTypes: ['StatementParseError'] });
    expect(o.retry).toEqual({ initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [BUSINESS_ERROR, 'StatementParseError'] });
    expect(o.retry).not.toHaveProperty('maximumAttempts');
    expect(o.scheduleToCloseTimeout).toBe((2 + DEFAULT_RETRY_WINDOW_MINUTES) * 60_000);
    expect(activityOptions({ startToCloseTimeout: '30 seconds', retryWindowMinutes: 5, extraWindowMinutes: 2 }).scheduleToCloseTimeout).toBe(30_000 + 7 * 60_000);
  });
});

describe('userFacingFailure', () => {
  const fallback = 'Processing stopped because a service of the platform was unavailable for too long.';
  it('passes a business error through, never an outage, a defect or a timeout', () => {
    expect(userFacingFailure(failed(ApplicationFailure.nonRetryable('line 3: amount missing', 'StatementParseError')), fallback)).toBe('line 3: amount missing');
    expect(userFacingFailure(failed(ApplicationFailure.create({ type: TRANSIENT_INFRA_ERROR, message: 'connect ECONNREFUSED 127.0.0.1:5433' })), fallback)).toBe(fallback);
    expect(userFacingFailure(failed(ApplicationFailure.create({ type: UNEXPECTED_ERROR, message: 'x is undefined', nonRetryable: true })), fallback)).toBe(fallback);
    expect(userFacingFailure(failed(new TimeoutFailure('timed out', undefined, TimeoutType.SCHEDULE_TO_CLOSE)), fallback)).toBe(fallback);
    expect(userFacingFailure(failed(ApplicationFailure.create({ type: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:5433' })), fallback)).toBe(fallback);
  });
  it('passes the retryable failures a workflow declares user-worded (an external system\'s answer)', () => {
    const smtp = failed(ApplicationFailure.create({ type: 'SmtpUnavailable', message: 'The email server could not be reached.' }));
    expect(userFacingFailure(smtp, fallback, ['SmtpUnavailable'])).toBe('The email server could not be reached.');
    expect(userFacingFailure(smtp, fallback)).toBe(fallback);
  });
});
