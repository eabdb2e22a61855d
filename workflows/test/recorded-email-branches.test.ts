/**
 * Branches of the recorded once-only email (workflows/src/recorded-email.ts), run through the three
 * workflows that use it (welcome email, user invite, payment receipt) on a real Temporal dev server
 * with fake handlers behind the real activity family (recordedEmailActivities, see
 * support/workflow-env.ts): SMTP attempts used up, an email already sent, nothing to send, and a
 * worker that does not serve the kind.
 *
 * The fake handlers cap the SMTP server's attempts at 2 so the branch is reached in seconds; the
 * helper's handling does not depend on the number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { welcomeEmail } from '../src/admin/welcome-email.js';
import type { userInvite } from '../src/admin/user-invite.js';
import type { paymentReceipt } from '../src/cash-app/payment-receipt.js';
import { welcomeEmailWorkflowId } from '../src/admin/welcome-email.js';
import { userInviteWorkflowId } from '../src/admin/user-invite.js';
import { paymentReceiptWorkflowId, SMTP_UNAVAILABLE, type PaymentReceiptInput } from '../src/cash-app/payment-receipt.js';
import type { RecordedEmailKind } from '../src/recorded-email.js';
import { RECORDED_EMAIL_KIND_NOT_SERVED, recordedEmailActivities, type RecordedEmailHandler } from '../src/recorded-email-activities.js';
import { createWorkflowTestEnv, failingExternally, uniqueId, uniqueTaskQueue, withWorkers, workflowFailure } from './support/workflow-env.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createWorkflowTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

/** A handler that records its calls as `<kind>:<step>` and sends (by default) email `<kind>-email` as `<kind>@test`. */
function fakeHandler(kind: RecordedEmailKind, calls: string[], over: Partial<RecordedEmailHandler<unknown>> = {}): RecordedEmailHandler<unknown> {
  return {
    prepare: async () => {
      calls.push(`${kind}:prepare`);
      return { status: 'ready', emailId: `${kind}-email` };
    },
    deliver: async (_input, emailId) => {
      calls.push(`${kind}:deliver:${emailId}`);
      return { status: 'delivered', emailId, messageId: `<${kind}@test>` };
    },
    recordSent: async ({ emailId, messageId }) => {
      calls.push(`${kind}:recordSent:${emailId}:${messageId}`);
    },
    ...over,
  };
}

function runWelcome(activities: object) {
  const taskQueue = uniqueTaskQueue('admin');
  const i = { organizationId: uniqueId('org'), userId: uniqueId('user') };
  return withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
    env.client.workflow.execute<typeof welcomeEmail>('welcomeEmail', { taskQueue, workflowId: welcomeEmailWorkflowId(i.userId), args: [i] }),
  );
}

function runInvite(activities: object) {
  const taskQueue = uniqueTaskQueue('admin');
  const i = { organizationId: uniqueId('org'), inviteId: uniqueId('invite') };
  return withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
    env.client.workflow.execute<typeof userInvite>('userInvite', { taskQueue, workflowId: userInviteWorkflowId(i.inviteId), args: [i] }),
  );
}

function receiptInput(): PaymentReceiptInput {
  return { organizationId: uniqueId('org'), outreachId: uniqueId('outreach'), paymentId: uniqueId('pay'), retry: { maximumAttempts: 2, initialIntervalSeconds: 1 } };
}

function runReceipt(activities: object, i = receiptInput()) {
  const taskQueue = uniqueTaskQueue('cash-app');
  return withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
    env.client.workflow.execute<typeof paymentReceipt>('paymentReceipt', { taskQueue, workflowId: paymentReceiptWorkflowId(i.paymentId), args: [i] }),
  );
}

/** The receipt's own activity beside the family: marking the outreach record failed for users. */
function receiptFailedFake(calls: string[]) {
  return {
    markPaymentReceiptFailed: async ({ error }: { error: string }) => {
      calls.push(`receipt:markFailed:${error}`);
    },
  };
}

describe('recorded email: SMTP attempts used up', () => {
  it('fails the welcome email with the email server\'s answer from deliverRecordedEmail, and never records "sent"', async () => {
    const calls: string[] = [];
    const welcome = fakeHandler('welcome', calls, {
      deliver: async () => {
        calls.push('welcome:deliver');
        return failingExternally('SmtpUnavailable', 'The email server could not be reached.', 2);
      },
    });
    const failure = await workflowFailure(runWelcome(recordedEmailActivities({ welcome })));
    const activity = failure.cause;
    expect(activity).toBeInstanceOf(ActivityFailure);
    expect((activity as ActivityFailure).activityType).toBe('deliverRecordedEmail');
    expect((activity as ActivityFailure).cause).toMatchObject({ type: 'SmtpUnavailable', message: 'The email server could not be reached.' });
    expect(calls).toEqual(['welcome:prepare', 'welcome:deliver', 'welcome:deliver']);
  });

  it('records the receipt failed with the email server\'s answer (the receipt\'s onSendFailure), and never records "sent"', async () => {
    const calls: string[] = [];
    const message = 'The email server could not be reached.';
    const receipt = fakeHandler('receipt', calls, {
      deliver: async () => {
        calls.push('receipt:deliver');
        return failingExternally(SMTP_UNAVAILABLE, message, 2);
      },
    });
    expect(await runReceipt({ ...recordedEmailActivities({ receipt }), ...receiptFailedFake(calls) })).toEqual({ status: 'failed', error: message });
    expect(calls).toEqual(['receipt:prepare', 'receipt:deliver', 'receipt:deliver', `receipt:markFailed:${message}`]);
  });
});

describe('recorded email: already sent', () => {
  it('sends nothing when the intent is already recorded sent (prepare)', async () => {
    const calls: string[] = [];
    const invite = fakeHandler('invite', calls, {
      prepare: async () => {
        calls.push('invite:prepare');
        return { status: 'already-sent', emailId: 'invite-email', messageId: '<i0@test>' };
      },
    });
    expect(await runInvite(recordedEmailActivities({ invite }))).toEqual({ status: 'already-sent', emailId: 'invite-email', messageId: '<i0@test>' });
    expect(calls).toEqual(['invite:prepare']);
  });

  it('records nothing more when the delivery finds it sent (an earlier attempt\'s send was recorded)', async () => {
    const calls: string[] = [];
    const welcome = fakeHandler('welcome', calls, {
      deliver: async (_input, emailId) => {
        calls.push(`welcome:deliver:${emailId}`);
        return { status: 'already-sent', emailId, messageId: '<w0@test>' };
      },
    });
    expect(await runWelcome(recordedEmailActivities({ welcome }))).toEqual({ status: 'already-sent', emailId: 'welcome-email', messageId: '<w0@test>' });
    expect(calls).toEqual(['welcome:prepare', 'welcome:deliver:welcome-email']);
  });

  it('answers a receipt sent earlier with the Message-ID it was sent with, as the receipt always has', async () => {
    const calls: string[] = [];
    const i = receiptInput();
    const receipt = fakeHandler('receipt', calls, {
      prepare: async () => {
        calls.push('receipt:prepare');
        return { status: 'already-sent', emailId: i.outreachId, messageId: '<r0@test>' };
      },
    });
    expect(await runReceipt({ ...recordedEmailActivities({ receipt }), ...receiptFailedFake(calls) }, i)).toEqual({ status: 'already-sent', emailId: '<r0@test>' });
    expect(calls).toEqual(['receipt:prepare']);
  });
});

describe('recorded email: skipped', () => {
  it('sends nothing when there is nobody to send to, and says why', async () => {
    const calls: string[] = [];
    const receipt = fakeHandler('receipt', calls, {
      prepare: async () => {
        calls.push('receipt:prepare');
        return { status: 'skipped', reason: 'no recipient: the customer has no email address' };
      },
    });
    expect(await runReceipt({ ...recordedEmailActivities({ receipt }), ...receiptFailedFake(calls) })).toEqual({
      status: 'skipped',
      reason: 'no recipient: the customer has no email address',
    });
    expect(calls).toEqual(['receipt:prepare']);
  });

  it('sends nothing when the subject went away between the intent and the send, and records nothing', async () => {
    const calls: string[] = [];
    const invite = fakeHandler('invite', calls, {
      deliver: async (_input, emailId) => {
        calls.push(`invite:deliver:${emailId}`);
        return { status: 'skipped', reason: 'invite is revoked' };
      },
    });
    expect(await runInvite(recordedEmailActivities({ invite }))).toEqual({ status: 'skipped', reason: 'invite is revoked' });
    expect(calls).toEqual(['invite:prepare', 'invite:deliver:invite-email']);
  });
});

describe('recorded email: the family', () => {
  it('runs each step of a kind on its handler and sends once; a receipt answers with the Message-ID as before', async () => {
    const calls: string[] = [];
    const i = receiptInput();
    const receipt = fakeHandler('receipt', calls, {
      prepare: async () => {
        calls.push('receipt:prepare');
        return { status: 'ready', emailId: i.outreachId };
      },
    });
    expect(await runReceipt({ ...recordedEmailActivities({ receipt }), ...receiptFailedFake(calls) }, i)).toEqual({ status: 'sent', emailId: '<receipt@test>' });
    expect(calls).toEqual(['receipt:prepare', `receipt:deliver:${i.outreachId}`, `receipt:recordSent:${i.outreachId}:<receipt@test>`]);
  });

  it('refuses, at once and without sending, a kind the worker does not serve (a workflow on the wrong task queue)', async () => {
    const calls: string[] = [];
    const failure = await workflowFailure(runWelcome(recordedEmailActivities({ receipt: fakeHandler('receipt', calls) })));
    expect((failure.cause as ActivityFailure).activityType).toBe('prepareRecordedEmail');
    expect((failure.cause as ActivityFailure).cause).toBeInstanceOf(ApplicationFailure);
    expect(((failure.cause as ActivityFailure).cause as ApplicationFailure).type).toBe(RECORDED_EMAIL_KIND_NOT_SERVED);
    expect(calls).toEqual([]);
  });
});
