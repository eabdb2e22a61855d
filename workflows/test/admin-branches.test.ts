/**
 * Branches of the admin workflows (welcome email, user invite, CNAM registration, scheduled report,
 * organization schedules) on a real Temporal dev server with fake activities (see
 * support/workflow-env.ts): an email is sent once even when recording it fails, a send that fails
 * for good ends the workflow without recording "sent", the registry's answer ends the CNAM wait, a
 * report that cannot be built or sent is marked failed for users, and a change signalled during a
 * reconcile makes another pass.
 *
 * The fake activities cap the SMTP server's attempts at 2 (the real ones use the workflows' SMTP
 * attempt constants) so the branch is reached in seconds; the workflows' handling does not depend on
 * the number.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import type { welcomeEmail } from '../src/admin/welcome-email.js';
import type { userInvite } from '../src/admin/user-invite.js';
import type { cnamRegistration } from '../src/admin/cnam-registration.js';
import type { scheduledReport } from '../src/admin/scheduled-report.js';
import type { organizationSchedules } from '../src/admin/organization-schedules.js';
import { welcomeEmailWorkflowId, type WelcomeEmailInput } from '../src/admin/welcome-email.js';
import { userInviteWorkflowId, type UserInviteInput } from '../src/admin/user-invite.js';
import type { RecordedEmailActivities } from '../src/recorded-email.js';
import { recordedEmailActivities, type RecordedEmailHandler } from '../src/recorded-email-activities.js';
import {
  cnamRegistrationWorkflowId,
  cnamRegistryAnswerSignal,
  type CnamRegistrationActivities,
  type CnamRegistrationInput,
  type CnamRegistryAnswer,
} from '../src/admin/cnam-registration.js';
import {
  REPORT_BUILD_FAILED_TYPE,
  REPORT_FAILED,
  REPORT_SMTP_UNAVAILABLE,
  scheduledReportWorkflowId,
  type ScheduledReportActivities,
  type ScheduledReportInput,
} from '../src/admin/scheduled-report.js';
import {
  organizationSchedulesChanged,
  organizationSchedulesWorkflowId,
  type OrganizationScheduleActivities,
} from '../src/admin/organization-schedules.js';
import { REPORT_BUILD_TASK_QUEUE, type BuiltReport, type ReportBuildActivities } from '../src/reports/contracts.js';
import {
  createWorkflowTestEnv,
  deferred,
  failingExternally,
  outageOnFirstAttempt,
  uniqueId,
  uniqueTaskQueue,
  unexpectedFailure,
  withWorkers,
  workflowFailure,
} from './support/workflow-env.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await createWorkflowTestEnv();
});
afterAll(async () => {
  await env?.teardown();
});

/** The activity failure a failed workflow ends with, as the API's status reads it. */
function activityCause(err: Error): { activityType?: string; type?: string | null; message?: string } {
  const activity = err.cause;
  if (!(activity instanceof ActivityFailure)) throw new Error(`expected an activity failure, got ${String(activity)}`);
  const app = activity.cause;
  return { activityType: activity.activityType, type: app instanceof ApplicationFailure ? app.type : null, message: app?.message };
}

describe('welcomeEmail', () => {
  const input = (): WelcomeEmailInput => ({ organizationId: uniqueId('org'), userId: uniqueId('user') });

  /** The recorded-email family (kind `welcome`) over a fake handler; the activities of earlier workflow versions are not registered, so new workflows never schedule them. */
  function fakes(calls: string[], over: Partial<RecordedEmailHandler<WelcomeEmailInput>>): RecordedEmailActivities {
    return recordedEmailActivities({
      welcome: {
        prepare: async () => {
          calls.push('prepare');
          return { status: 'ready', emailId: 'email-1' };
        },
        deliver: async (_input, emailId) => {
          calls.push('deliver');
          return { status: 'delivered', emailId, messageId: '<w1@test>' };
        },
        recordSent: async ({ messageId }) => {
          calls.push(`recordSent:${messageId}`);
        },
        ...over,
      },
    });
  }

  async function run(activities: RecordedEmailActivities) {
    const taskQueue = uniqueTaskQueue('admin');
    const i = input();
    return await withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
      env.client.workflow.start<typeof welcomeEmail>('welcomeEmail', { taskQueue, workflowId: welcomeEmailWorkflowId(i.userId), args: [i] }).then((h) => h.result()),
    );
  }

  it('retries only the record when recording "sent" fails: the email goes out once', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      recordSent: async ({ messageId }) => {
        calls.push(`recordSent:${messageId}`);
        outageOnFirstAttempt();
      },
    });
    expect(await run(activities)).toEqual({ status: 'sent', emailId: 'email-1', messageId: '<w1@test>' });
    expect(calls).toEqual(['prepare', 'deliver', 'recordSent:<w1@test>', 'recordSent:<w1@test>']);
  });

  it('fails with the email server\'s answer once its attempts are used up, and never records "sent"', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      deliver: async () => {
        calls.push('deliver');
        return failingExternally('SmtpUnavailable', 'The email server could not be reached.', 2);
      },
    });
    const failure = await workflowFailure(run(activities));
    expect(activityCause(failure)).toEqual({ activityType: 'deliverRecordedEmail', type: 'SmtpUnavailable', message: 'The email server could not be reached.' });
    expect(calls).toEqual(['prepare', 'deliver', 'deliver']);
  });

  it('sends nothing when the email was already sent', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      prepare: async () => {
        calls.push('prepare');
        return { status: 'already-sent', emailId: 'email-1', messageId: '<w0@test>' };
      },
    });
    expect(await run(activities)).toEqual({ status: 'already-sent', emailId: 'email-1', messageId: '<w0@test>' });
    expect(calls).toEqual(['prepare']);
  });
});

describe('userInvite', () => {
  const input = (): UserInviteInput => ({ organizationId: uniqueId('org'), inviteId: uniqueId('invite') });

  /** The recorded-email family (kind `invite`) over a fake handler. */
  function fakes(calls: string[], over: Partial<RecordedEmailHandler<UserInviteInput>>): RecordedEmailActivities {
    return recordedEmailActivities({
      invite: {
        prepare: async () => {
          calls.push('prepare');
          return { status: 'ready', emailId: 'email-2' };
        },
        deliver: async (_input, emailId) => {
          calls.push('deliver');
          return { status: 'delivered', emailId, messageId: '<i1@test>' };
        },
        recordSent: async ({ messageId }) => {
          calls.push(`recordSent:${messageId}`);
        },
        ...over,
      },
    });
  }

  async function run(activities: RecordedEmailActivities) {
    const taskQueue = uniqueTaskQueue('admin');
    const i = input();
    return await withWorkers(env, [{ taskQueue, activities, workflows: true }], () =>
      env.client.workflow.start<typeof userInvite>('userInvite', { taskQueue, workflowId: userInviteWorkflowId(i.inviteId), args: [i] }).then((h) => h.result()),
    );
  }

  it('sends nothing for an invite revoked before its email went out, and says why', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      prepare: async () => {
        calls.push('prepare');
        return { status: 'skipped', reason: 'the invite was revoked' };
      },
    });
    expect(await run(activities)).toEqual({ status: 'skipped', reason: 'the invite was revoked' });
    expect(calls).toEqual(['prepare']);
  });

  it('fails at once when the email row is gone (never retried), and never records "sent"', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      deliver: async () => {
        calls.push('deliver');
        throw ApplicationFailure.create({ type: 'EmailNotFound', message: 'outbound email email-2 does not exist' });
      },
    });
    const failure = await workflowFailure(run(activities));
    expect(activityCause(failure)).toMatchObject({ activityType: 'deliverRecordedEmail', type: 'EmailNotFound' });
    expect(calls).toEqual(['prepare', 'deliver']);
  });

  it('retries only the record when recording "sent" fails: the invitation goes out once', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      recordSent: async ({ messageId }) => {
        calls.push(`recordSent:${messageId}`);
        outageOnFirstAttempt();
      },
    });
    expect(await run(activities)).toEqual({ status: 'sent', emailId: 'email-2', messageId: '<i1@test>' });
    expect(calls).toEqual(['prepare', 'deliver', 'recordSent:<i1@test>', 'recordSent:<i1@test>']);
  });
});

describe('cnamRegistration', () => {
  const input = (): CnamRegistrationInput => ({ organizationId: uniqueId('org'), registrationId: uniqueId('reg'), submissionId: uniqueId('sub') });

  function fakes(calls: string[], over: Partial<CnamRegistrationActivities>): CnamRegistrationActivities {
    return {
      submitCnamRegistration: async () => {
        calls.push('submit');
        return { status: 'in_review', registryReference: 'R-1' };
      },
      recordCnamDecision: async ({ approved, detail, source }) => {
        calls.push(`record:${approved}:${detail}:${source}`);
        return { status: approved ? 'approved' : 'rejected', detail };
      },
      ...over,
    };
  }

  it('waits in review until the registry\'s answer arrives, records the first answer, and ignores a later one', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('admin');
    const submitted = deferred();
    const activities = fakes(calls, {
      submitCnamRegistration: async () => {
        calls.push('submit');
        submitted.resolve();
        return { status: 'in_review', registryReference: 'R-1' };
      },
    });
    const result = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      const handle = await env.client.workflow.start<typeof cnamRegistration>('cnamRegistration', { taskQueue, workflowId: cnamRegistrationWorkflowId(i.submissionId), args: [i] });
      await submitted.promise;
      const rejected: CnamRegistryAnswer = { approved: false, detail: 'The display name is already registered.', source: 'cli' };
      await handle.signal(cnamRegistryAnswerSignal, rejected);
      await handle.signal(cnamRegistryAnswerSignal, { approved: true, detail: null, source: 'cli' });
      return await handle.result();
    });
    expect(result).toEqual({ status: 'rejected', detail: 'The display name is already registered.' });
    expect(calls).toEqual(['submit', 'record:false:The display name is already registered.:cli']);
  });

  it('keeps an answer signalled while the submission is still being handed over', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('admin');
    const submitting = deferred();
    const answered = deferred();
    const activities = fakes(calls, {
      submitCnamRegistration: async () => {
        calls.push('submit');
        submitting.resolve();
        await answered.promise;
        return { status: 'in_review', registryReference: 'R-2' };
      },
    });
    const result = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      const handle = await env.client.workflow.start<typeof cnamRegistration>('cnamRegistration', { taskQueue, workflowId: cnamRegistrationWorkflowId(i.submissionId), args: [i] });
      await submitting.promise;
      await handle.signal(cnamRegistryAnswerSignal, { approved: true, detail: 'approved on first review', source: 'adapter' });
      answered.resolve();
      return await handle.result();
    });
    expect(result).toEqual({ status: 'approved', detail: 'approved on first review' });
    expect(calls).toEqual(['submit', 'record:true:approved on first review:adapter']);
  });

  it('ends without waiting when the registry answers at once, or when the submission was superseded', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('admin');
    const answers = [{ status: 'approved' as const, detail: 'auto-approved' }, { status: 'superseded' as const }];
    const activities = fakes(calls, {
      submitCnamRegistration: async () => {
        calls.push('submit');
        return answers.shift()!;
      },
    });
    const results = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const out = [];
      for (let k = 0; k < 2; k++) {
        const i = input();
        out.push(await env.client.workflow.execute<typeof cnamRegistration>('cnamRegistration', { taskQueue, workflowId: cnamRegistrationWorkflowId(i.submissionId), args: [i] }));
      }
      return out;
    });
    expect(results).toEqual([{ status: 'approved', detail: 'auto-approved' }, { status: 'superseded' }]);
    expect(calls).toEqual(['submit', 'submit']);
  });

  it('fails, recording no decision, when the submission is refused for good', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('admin');
    const activities = fakes(calls, {
      submitCnamRegistration: async () => {
        calls.push('submit');
        throw ApplicationFailure.nonRetryable('the registration has no display name', 'BusinessError');
      },
    });
    const failure = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const i = input();
      return await workflowFailure(env.client.workflow.execute<typeof cnamRegistration>('cnamRegistration', { taskQueue, workflowId: cnamRegistrationWorkflowId(i.submissionId), args: [i] }));
    });
    expect(activityCause(failure)).toEqual({ activityType: 'submitCnamRegistration', type: 'BusinessError', message: 'the registration has no display name' });
    expect(calls).toEqual(['submit']);
  });
});

describe('scheduledReport', () => {
  const input = (): ScheduledReportInput => ({ organizationId: uniqueId('org'), configId: uniqueId('cfg'), runId: 'run-1' });
  const report: BuiltReport = {
    title: 'AR aging report as of 2026-11-23',
    summaryColumns: ['Customer', 'Open'],
    summaryRows: [{ label: 'Acme', values: ['100.00'] }],
    rowCount: 1,
    counts: { customers: 1 },
    artifacts: [],
  };

  function fakes(calls: string[], over: Partial<ScheduledReportActivities & ReportBuildActivities>) {
    const all: ScheduledReportActivities & ReportBuildActivities = {
      startReportRun: async ({ runId }) => {
        calls.push('start');
        return {
          status: 'ready',
          plan: { runId: runId ?? 'run-1', reportType: 'ar_aging_report', timezone: 'Europe/Paris', asOfDate: '2026-11-23', periodStart: '2026-11-16T00:00:00.000Z', periodEnd: '2026-11-23T00:00:00.000Z' },
        };
      },
      buildArAgingReport: async () => {
        calls.push('build');
        return report;
      },
      buildIntegrationSyncReport: async () => {
        throw new Error('not this report type');
      },
      prepareReportEmail: async () => {
        calls.push('prepare');
        return { status: 'ready', emailId: 'email-3' };
      },
      deliverReportEmail: async () => {
        calls.push('deliver');
        return { status: 'delivered', messageId: '<r1@test>' };
      },
      recordReportSent: async ({ messageId }) => {
        calls.push(`recordSent:${messageId}`);
      },
      markReportRunFailed: async ({ error }) => {
        calls.push(`markFailed:${error}`);
      },
      ...over,
    };
    const { buildArAgingReport, buildIntegrationSyncReport, ...admin } = all;
    return { admin, build: { buildArAgingReport, buildIntegrationSyncReport } };
  }

  /** The workflow and the admin activities on one task queue; the build on the owning service's (cash-app's for AR aging). */
  async function run(activities: ReturnType<typeof fakes>) {
    const taskQueue = uniqueTaskQueue('admin');
    const i = input();
    return await withWorkers(
      env,
      [
        { taskQueue, activities: activities.admin, workflows: true },
        { taskQueue: REPORT_BUILD_TASK_QUEUE.ar_aging_report, activities: activities.build },
      ],
      () => env.client.workflow.execute<typeof scheduledReport>('scheduledReport', { taskQueue, workflowId: scheduledReportWorkflowId(i.configId, i.runId), args: [i] }),
    );
  }

  it('marks the run failed with the build\'s own words when the report cannot be built, and sends nothing', async () => {
    const calls: string[] = [];
    const message = 'The organization has no currency rates for 2026-11-23.';
    const activities = fakes(calls, {
      buildArAgingReport: async () => {
        calls.push('build');
        throw ApplicationFailure.create({ type: REPORT_BUILD_FAILED_TYPE, message, nonRetryable: true });
      },
    });
    expect(await run(activities)).toEqual({ status: 'failed', runId: 'run-1', error: message });
    expect(calls).toEqual(['start', 'build', `markFailed:${message}`]);
  });

  it('marks the run failed with the email server\'s answer once the SMTP attempts are used up', async () => {
    const calls: string[] = [];
    const message = 'The email server could not be reached.';
    const activities = fakes(calls, {
      deliverReportEmail: async () => {
        calls.push('deliver');
        return failingExternally(REPORT_SMTP_UNAVAILABLE, message, 2);
      },
    });
    expect(await run(activities)).toEqual({ status: 'failed', runId: 'run-1', error: message });
    expect(calls).toEqual(['start', 'build', 'prepare', 'deliver', 'deliver', `markFailed:${message}`]);
  });

  it('marks the run failed with an actionable message, not the technical text, on a defect', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, { prepareReportEmail: async () => unexpectedFailure('recipients.map is not a function') });
    expect(await run(activities)).toEqual({ status: 'failed', runId: 'run-1', error: REPORT_FAILED });
    expect(calls).toEqual(['start', 'build', `markFailed:${REPORT_FAILED}`]);
  });

  it('retries only the record when recording "sent" fails: the report is emailed once', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      recordReportSent: async ({ messageId }) => {
        calls.push(`recordSent:${messageId}`);
        outageOnFirstAttempt();
      },
    });
    expect(await run(activities)).toEqual({ status: 'sent', runId: 'run-1', messageId: '<r1@test>' });
    expect(calls).toEqual(['start', 'build', 'prepare', 'deliver', 'recordSent:<r1@test>', 'recordSent:<r1@test>']);
  });

  it('builds and sends nothing for a disabled or deleted config', async () => {
    const calls: string[] = [];
    const activities = fakes(calls, {
      startReportRun: async () => {
        calls.push('start');
        return { status: 'skipped', reason: 'the report config is disabled' };
      },
    });
    expect(await run(activities)).toEqual({ status: 'skipped', reason: 'the report config is disabled' });
    expect(calls).toEqual(['start']);
  });
});

describe('organizationSchedules', () => {
  it('makes another pass when a change is signalled during one, and rides out a failing step until it succeeds', async () => {
    const calls: string[] = [];
    const taskQueue = uniqueTaskQueue('admin');
    const reconciling = deferred();
    const changed = deferred();
    let configs = ['cfg-a'];
    let first = true;
    const activities: OrganizationScheduleActivities = {
      reportConfigIdsOfOrganization: async () => {
        calls.push(`list:${configs.join(',')}`);
        return configs;
      },
      reconcileReportSchedule: async ({ configId }) => {
        calls.push(`reconcile:${configId}`);
        if (first) {
          first = false;
          reconciling.resolve();
          await changed.promise;
          // Temporal unreachable while writing the Schedule: retried until it succeeds
          throw ApplicationFailure.create({ type: 'ServiceError', message: '14 UNAVAILABLE: Connection dropped' });
        }
      },
      reconcileCollectionsSchedule: async () => {
        calls.push('collections');
      },
    };
    const result = await withWorkers(env, [{ taskQueue, activities, workflows: true }], async () => {
      const organizationId = uniqueId('org');
      const handle = await env.client.workflow.signalWithStart<typeof organizationSchedules>('organizationSchedules', {
        taskQueue,
        workflowId: organizationSchedulesWorkflowId(organizationId),
        args: [{ organizationId }],
        signal: organizationSchedulesChanged,
        signalArgs: [],
      });
      await reconciling.promise;
      // a config created while the first pass runs: the change is signalled after its commit
      configs = ['cfg-a', 'cfg-b'];
      await handle.signal(organizationSchedulesChanged);
      changed.resolve();
      return await handle.result();
    });
    // each pass ends with the collections Schedule, written from the state committed when it runs
    expect(result).toEqual({ passes: 2, reconciled: 5 });
    expect(calls).toEqual(['list:cfg-a', 'reconcile:cfg-a', 'reconcile:cfg-a', 'collections', 'list:cfg-a,cfg-b', 'reconcile:cfg-a', 'reconcile:cfg-b', 'collections']);
  });
});
