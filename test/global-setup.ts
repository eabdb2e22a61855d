/**
 * One real PostgreSQL, one real Temporal dev server and one real SMTP sink for the whole run,
 * and one workflow bundle built once. Each test file then makes its own database and Temporal
 * namespace (see support/stack.ts), so files run in parallel without seeing each other.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import { freePorts, startEmbeddedPostgres, startMailDev, startTemporalDevServer } from '../scripts/local/components.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgUrlTemplate: string;
    temporalAddress: string;
    smtpUrl: string;
    mailApiUrl: string;
    workflowBundlePath: string;
  }
}

export default async function setup(project: TestProject) {
  const root = path.resolve('var', 'test', `run-${process.pid}`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });

  const [pgPort, smtpPort, webPort] = await freePorts(3);
  const [pg, temporal, mail, bundle] = await Promise.all([
    startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), port: pgPort, persistent: false }),
    startTemporalDevServer({ uiPort: null, dbFile: null, logFile: path.join(root, 'temporal.log') }),
    startMailDev({ smtpPort, webPort }),
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

  return async () => {
    await Promise.allSettled([temporal.stop(), mail.stop()]);
    await pg.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  };
}
