import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { welcomeEmail, welcomeEmailWorkflowId, TASK_QUEUES, ORGANIZATION_ID } from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { failUpdates } from './support/faults.js';
import { failRunningAttempt, smtpGate, startOneSlotWorker } from './support/smtp-gate.js';

let stack: TestStack;
let org: Org;
let temporal: TemporalHandle;

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
  org = await stack.onboard('Welcome Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

describe('welcome email workflow', () => {
  it('emails a new user through Temporal and SMTP, once', async () => {
    const email = `new.user.${Date.now()}@example.com`;
    const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email, name: 'Nora New' }, headers: { 'x-request-id': 'req-welcome-nora' } });
    expect(res.status).toBe(200);
    const userId = res.body.id as string;

    const handle = temporal.client.workflow.getHandle(welcomeEmailWorkflowId(userId));
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'sent', messageId: expect.any(String) });
    const description = await handle.describe();
    expect(description.taskQueue).toBe(TASK_QUEUES.admin);
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);

    // The recorded history replays against today's workflow code (determinism check).
    const history = await handle.fetchHistory();
    const started = history.events![0].workflowExecutionStartedEventAttributes!.input!.payloads![0];
    // The request id travels from the gateway through the service into the activity's input; the
    // activities' retry window (ACTIVITY_RETRY_WINDOW_MINUTES, default 30) is recorded with it.
    expect(JSON.parse(Buffer.from(started.data!).toString())).toEqual({ organizationId: org.organizationId, userId, requestId: 'req-welcome-nora', retryWindowMinutes: 30 });
    await replayHistory(stack, description.workflowId, history, 'welcome-email-recorded-email.json');

    const mails = await waitForMail(email);
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toBe('Welcome to Welcome Org on the Receivables Platform');
    expect(mails[0].text).toContain('Hello Nora New');

    const [row] = await stack.sql(`SELECT status, message_id, attempts FROM admin.outbound_emails WHERE idempotency_key = $1`, [`welcome-${userId}`]);
    expect(row).toMatchObject({ status: 'sent', attempts: 1 });

    // Running the workflow again (a retry, an operator's re-run) does not send a second email.
    const again = await temporal.client.workflow.execute(welcomeEmail, {
      taskQueue: TASK_QUEUES.admin,
      workflowId: `${welcomeEmailWorkflowId(userId)}-rerun`,
      args: [{ organizationId: org.organizationId, userId }],
    });
    expect(again).toMatchObject({ status: 'already-sent' });
    await new Promise((r) => setTimeout(r, 500));
    expect(await waitForMail(email, { count: 2, timeoutMs: 1000 })).toHaveLength(1);
  });

  it('sends once when recording "sent" fails after the SMTP server accepted: only the recording is retried', async () => {
    const email = `write.fails.${Date.now()}@example.com`;
    // The database refuses the first two "sent" updates of this email's row, as an outage right after
    // the SMTP call would.
    const fault = await failUpdates(stack, {
      table: 'admin.outbound_emails',
      when: `NEW.status = 'sent' AND OLD.status <> 'sent' AND NEW.to_address = '${email}'`,
      name: `fail_${email.replace(/[^a-z0-9]/g, '_')}`,
      times: 2,
    });
    try {
      const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email, name: 'Wanda Write' } });
      expect(res.status).toBe(200);
      const handle = temporal.client.workflow.getHandle(welcomeEmailWorkflowId(res.body.id));
      expect(await handle.result()).toMatchObject({ status: 'sent' });
      expect(await fault.attempts()).toBeGreaterThanOrEqual(3); // the two injected failures happened, then the record was written
      const [row] = await stack.sql(`SELECT status, attempts, message_id FROM admin.outbound_emails WHERE to_address = $1`, [email]);
      expect(row).toMatchObject({ status: 'sent', attempts: 1, message_id: expect.any(String) });
      // Before: each failed write failed the send activity, which sent again on retry (three emails).
      await new Promise((r) => setTimeout(r, 500));
      expect(await waitForMail(email, { count: 2, timeoutMs: 1500 })).toHaveLength(1);
    } finally {
      await fault.restore();
    }
  });

  it('sends once when the worker dies after the SMTP server accepted, before the delivery activity reported', async () => {
    // The chaos suite's duplicate: the delivery attempt ends (as a killed worker's does) after the SMTP
    // server accepted; the retried attempt used to find the row unrecorded and send again. Now the
    // attempt records "sent" at once after the acceptance, and the retry finds it sent.
    const gate = await smtpGate(inject('smtpUrl'));
    await stack.workers.admin!.close();
    const worker = await startOneSlotWorker(stack, 'admin', gate.url);
    try {
      const email = `killed.${Date.now()}@example.com`;
      const accepted = gate.holdNextAcceptance(email);
      const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email, name: 'Kim Killed' } });
      expect(res.status).toBe(200);
      const workflowId = welcomeEmailWorkflowId(res.body.id);
      await accepted; // MailDev has the message; the worker waits for the answer
      expect(await failRunningAttempt(temporal, stack.namespace, workflowId, 'deliverRecordedEmail')).toBe(1);
      gate.release();
      const result = await temporal.client.workflow.getHandle(workflowId).result();
      expect(['sent', 'already-sent']).toContain(result.status);
      const [row] = await stack.sql(`SELECT id, status, attempts, message_id FROM admin.outbound_emails WHERE to_address = $1`, [email]);
      expect(row).toMatchObject({ status: 'sent', attempts: 1 });
      // The Message-ID is the intent's, the same on every copy there could be (duplicates are detectable).
      expect(row.message_id).toBe(`<${row.id}@receivables.local>`);
      const mails = await waitForMail(email, { count: 2, timeoutMs: 1500 });
      expect(mails).toHaveLength(1); // before: two, the second from the retried attempt
      expect(`<${mails[0].messageId}>`).toBe(row.message_id);
    } finally {
      gate.release();
      await worker.close();
      await gate.close();
      await stack.startWorker('admin');
    }
  });

  it('skips a user that does not exist', async () => {
    const result = await temporal.client.workflow.execute(welcomeEmail, {
      taskQueue: TASK_QUEUES.admin,
      workflowId: `welcome-email-missing-${Date.now()}`,
      args: [{ organizationId: org.organizationId, userId: '01938f5e-0000-7000-8000-000000000000' }],
    });
    expect(result).toEqual({ status: 'skipped', reason: 'user does not exist' });
  });

  it('retries while SMTP is down and delivers once it is back', async () => {
    // Point a second worker at a closed SMTP port: the activity fails and Temporal retries it.
    await stack.workers.admin!.close();
    const { default: net } = await import('node:net');
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const { startServiceWorker } = await import('@rp/platform');
    const { adminModule, loadAdminConfig } = await import('@rp/admin');
    const { workflowsPath } = await import('@rp/workflows/paths');
    const { inject } = await import('vitest');
    const broken = await startServiceWorker(adminModule, loadAdminConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${deadPort}` }), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    const email = `retry.${Date.now()}@example.com`;
    const res = await stack.request('POST', '/v2/users', { token: org.token, body: { email, name: 'Rita Retry' } });
    const handle = temporal.client.workflow.getHandle(welcomeEmailWorkflowId(res.body.id));
    const deadline = Date.now() + 20_000;
    let failedAttempts = 0;
    while (Date.now() < deadline) {
      const [row] = await stack.sql(`SELECT attempts, last_error, status FROM admin.outbound_emails WHERE to_address = $1`, [email]);
      if (row?.last_error) {
        failedAttempts = row.attempts;
        expect(row.status).toBe('sending');
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(failedAttempts).toBeGreaterThanOrEqual(1);
    await broken.close();
    await stack.startWorker('admin');
    expect(await handle.result()).toMatchObject({ status: 'sent' });
    expect(await waitForMail(email)).toHaveLength(1);
  });
});
