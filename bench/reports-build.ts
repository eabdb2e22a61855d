/**
 * Child process of `npm run bench -- reports`: runs buildArAgingReport (the cash-app activity, called
 * directly — the function the cash-app worker registers) once for the organization in BENCH_ORG_ID,
 * writing the XLSX and the CSV to the S3 server in S3_*, and prints one JSON line: the time of the
 * whole build (ledger read, both files, both uploads), the process's RSS before it, and its peak RSS
 * (VmHWM: the kernel's high-water mark of this process, which catches peaks a sampler could miss).
 */
import { readFileSync } from 'node:fs';
import { createDb, createLogger, ObjectStorage } from '@rp/platform';
import { createReportActivities } from '../services/cash-app/src/activities/reports.js';

function statusKb(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const env = process.env as Record<string, string>;
const db = createDb({ url: env.DATABASE_URL, schema: 'cash_app', poolMax: 2 });
const storage = new ObjectStorage({ endpoint: env.S3_ENDPOINT, bucket: env.S3_BUCKET, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY, region: env.S3_REGION });
const activities = createReportActivities({ db, log: createLogger('bench-reports', 'silent'), storage });
await storage.ready();
await db.raw('select 1');
const baselineKb = statusKb('VmRSS');
const t = performance.now();
const built = await activities.buildArAgingReport({
  organizationId: env.BENCH_ORG_ID,
  configId: '019a0000-0000-7000-8000-0000000be4c0',
  runId: env.BENCH_RUN_ID,
  timezone: 'UTC',
  asOfDate: env.BENCH_AS_OF,
  periodStart: `${env.BENCH_AS_OF}T00:00:00Z`,
  periodEnd: `${env.BENCH_AS_OF}T00:00:00Z`,
});
const ms = performance.now() - t;
process.stdout.write(
  `RESULT ${JSON.stringify({ ms, baseline_rss_kb: baselineKb, peak_rss_kb: statusKb('VmHWM'), row_count: built.rowCount, counts: built.counts, artifacts: built.artifacts.map((a) => ({ filename: a.filename, size: a.size })) })}\n`,
);
storage.close();
await db.destroy();
