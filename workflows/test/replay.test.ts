/**
 * Recorded workflow histories (workflows/test/histories/*.json, recorded from real runs with
 * `RECORD_HISTORIES=1 npm test`) must replay against today's workflow code: a change that
 * breaks determinism fails here before it can break running workflows.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { Worker } from '@temporalio/worker';

const dir = path.resolve('workflows/test/histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('workflow replay', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files)('replays %s deterministically', async (file) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    await Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, file);
  });

  it('keeps a history of every shape of the recorded emails, and the newest ones run the recorded-email family', () => {
    // one single activity → three activities of their own names → the family (patched() at each step)
    const shapes = {
      'welcome-email.json': 'sendWelcomeEmail',
      'welcome-email-send-then-record.json': 'deliverWelcomeEmail',
      'welcome-email-recorded-email.json': 'deliverRecordedEmail',
      'user-invite.json': 'deliverUserInvite',
      'user-invite-recorded-email.json': 'deliverRecordedEmail',
      'payment-receipt.json': 'sendPaymentReceipt',
      'payment-receipt-send-then-record.json': 'deliverPaymentReceipt',
      'payment-receipt-recorded-email.json': 'deliverRecordedEmail',
      'payment-receipt-failed.json': 'sendPaymentReceipt',
      'payment-receipt-failed-send-then-record.json': 'deliverPaymentReceipt',
      'payment-receipt-failed-recorded-email.json': 'deliverRecordedEmail',
      'remittance-request.json': 'deliverRecordedEmail',
      'remittance-request-failed.json': 'markRemittanceRequestFailed',
      'inbox-message.json': 'finishInboxMessage',
      'inbox-message-remittance.json': 'recordInboundRemittances',
    };
    for (const [file, sends] of Object.entries(shapes)) {
      expect(files, file).toContain(file);
      const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      const scheduled = (history.events as { activityTaskScheduledEventAttributes?: { activityType?: { name?: string } } }[])
        .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
        .filter(Boolean);
      expect(scheduled, file).toContain(sends);
    }
  });

  it('detects a non-deterministic change', async () => {
    // The welcome history schedules an activity; a bundle whose workflow does something else must fail.
    const history = JSON.parse(readFileSync(path.join(dir, 'welcome-email.json'), 'utf8'));
    const { bundleWorkflowCode } = await import('@temporalio/worker');
    const { mkdirSync, mkdtempSync, writeFileSync } = await import('node:fs');
    // Inside the repository so the bundler resolves @temporalio/workflow from node_modules.
    mkdirSync(path.resolve('var/test'), { recursive: true });
    const tmp = mkdtempSync(path.resolve('var/test/replay-'));
    const changed = path.join(tmp, 'changed.ts');
    writeFileSync(changed, `import { sleep } from '@temporalio/workflow';\nexport async function welcomeEmail() { await sleep(1000); return { status: 'skipped', reason: 'changed' }; }\n`);
    const bundle = await bundleWorkflowCode({ workflowsPath: changed, logger: { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} } });
    await expect(Worker.runReplayHistory({ workflowBundle: bundle }, history, 'changed')).rejects.toThrow(/[Nn]ondetermin/);
  });
});
