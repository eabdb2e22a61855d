/**
 * `npm run bench -- collections-run` (results: bench/results/collections-run.json).
 *
 * A collections run over 50,000 customers with 1,000,000 open invoices (bench/cash-app/ledger.ts
 * generateLedger; every customer given an email address), one organization (UTC), 10 segments
 * (customers by the last digit of their number) each with a policy of 5 steps (offsets -5, 0, 15,
 * 30, 60; email, email, email, task, email), the admin worker in a child process of its own, APIs
 * and gateway in this one, MailDev (a child process) as the SMTP sink:
 *   (a) a dry run started through the gateway, as of today: plan time (started_at → completed_at),
 *       actions planned. Target ≤ 60 s.
 *   (b) a real run: the time from the first to the last email accepted by the SMTP server (each
 *       message's recorded sent_at) and the emails per second over it. Target ≥ 200/s. MailDev's count
 *       is checked to be the number of emails recorded sent. Bare reference in the same run: this
 *       process sending BARE_EMAILS (default 5,000) emails of 1,000 characters straight to the same
 *       MailDev before the real run (MailDev slows as it fills), through nodemailer pooled as the
 *       worker's transport (8 connections), 32 in flight: what the SMTP sink itself takes now.
 *   (c) the worker's memory: its resident size idle (started, prebuilt workflow bundle) and its peak
 *       (VmHWM) after each run, against a bare reference measured in the same run: a child process
 *       that reads the same open invoices in one query (what loading the ledger would cost), its peak
 *       over its own idle size. Target: the worker's growth over idle below the bare reference's
 *       growth (the run streams in pages; it never loads the ledger).
 * Smaller volumes: BENCH_CUSTOMERS, BENCH_OPEN (e.g. 5000 and 100000).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { workflowsPath } from '@rp/workflows/paths';
import { startMailDev } from '../scripts/local/components.js';
import { startBenchEnvironment } from './support/environment.js';
import { onboardBenchOrganization, startApisAndGateway, type BenchApis } from './support/stack.js';
import { generateLedger } from './cash-app/ledger.js';

const VOLUME = { customers: Number(process.env.BENCH_CUSTOMERS ?? 50_000), open: Number(process.env.BENCH_OPEN ?? 1_000_000), closed: 0 };
const STEPS = [
  { offset_days: -5, channel: 'email' },
  { offset_days: 0, channel: 'email' },
  { offset_days: 15, channel: 'email' },
  { offset_days: 30, channel: 'task' },
  { offset_days: 60, channel: 'email' },
] as const;

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Peak and current resident memory of a process (MB), from /proc. */
function memoryOf(pid: number): { peak_rss_mb: number; rss_mb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(status.match(new RegExp(`${key}:\\s+(\\d+) kB`))?.[1] ?? 0);
  return { peak_rss_mb: round1(kb('VmHWM') / 1024), rss_mb: round1(kb('VmRSS') / 1024) };
}

/** The bare SMTP reference: `n` emails of `bodyChars` characters straight to the sink, pooled as the worker's transport is. */
async function bareSmtp(smtpUrl: string, n: number, bodyChars: number): Promise<{ emails: number; s: number; emails_per_s: number }> {
  const transport = nodemailer.createTransport(`${smtpUrl}${smtpUrl.includes('?') ? '&' : '?'}pool=true&maxConnections=8`);
  const body = 'x'.repeat(bodyChars);
  let next = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < n) {
        const i = next++;
        await transport.sendMail({ from: '"Bare" <bare@bench.example>', to: `bare.${i}@bare.example`, subject: `bare ${i}`, text: body });
      }
    }),
  );
  const s = (performance.now() - t) / 1000;
  transport.close();
  return { emails: n, s: round1(s), emails_per_s: round1(n / s) };
}

/** The bare reference: one process reading every open invoice of the organization in one query; its peak memory and time. */
async function bareScan(databaseUrl: string, orgId: string): Promise<{ ms: number; rows: number; peak_rss_mb: number; idle_rss_mb: number }> {
  const code = `
    const pg = require('pg');
    const fs = require('fs');
    (async () => {
      const c = new pg.Client({ connectionString: process.env.URL });
      await c.connect();
      const idle = Number(fs.readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\\s+(\\d+) kB/)[1]);
      const t = performance.now();
      const r = await c.query("SELECT d.id, d.partner_id, d.document_number, d.document_date::text, d.net_due_date::text, d.currency, d.amount_in_document_currency::text, d.amount_open::text FROM integrations.documents d WHERE d.organization_id = $1 AND d.kind = 'invoice' AND d.status_open AND d.net_due_date IS NOT NULL", [process.env.ORG]);
      const ms = performance.now() - t;
      const hwm = Number(fs.readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\\s+(\\d+) kB/)[1]);
      process.stdout.write(JSON.stringify({ ms, rows: r.rows.length, peak_rss_mb: Math.round(hwm / 102.4) / 10, idle_rss_mb: Math.round(idle / 102.4) / 10 }));
      await c.end();
    })();`;
  const child = spawn(process.execPath, ['-e', code], { env: { ...process.env, URL: databaseUrl, ORG: orgId }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.once('exit', r));
  return JSON.parse(out);
}

export async function run(): Promise<void> {
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const env = await startBenchEnvironment('collections-run');
  const mail = await startMailDev({ mailDir: path.resolve('var', 'bench', `collections-run-mail-${process.pid}`) });
  let stack: BenchApis | undefined;
  let worker: ChildProcess | undefined;
  try {
    const e: Record<string, string> = { ...env.env, DATABASE_POOL_MAX: '10', SMTP_URL: mail.smtpUrl };
    stack = await startApisAndGateway(e);
    const { orgId, token } = await onboardBenchOrganization(e, 'Collections run bench', 'collections-run@example.com');
    const client = new pg.Client({ connectionString: e.DATABASE_URL });
    client.on('error', () => {});
    await client.connect();
    const genStart = Date.now();
    await generateLedger(client, orgId, { ...VOLUME, log });
    await client.query(`UPDATE integrations.partners SET email = 'ap.' || remote_id || '@bench.example' WHERE organization_id = $1`, [orgId]);
    const generationS = (Date.now() - genStart) / 1000;

    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(stack!.gatewayUrl + p, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 500)}`);
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the answers are read as each step expects them
      return JSON.parse(text) as Record<string, any>;
    };
    const folder = await call('POST', '/v1/email-template-folders', { name: 'Dunning' });
    const tpl = await call('POST', '/v1/email-templates', {
      folder_id: folder.id,
      name: 'Reminder',
      subject: '{{ action.invoices.size }} invoice(s) for {{ customer.name }}',
      body: 'Dear {{ customer.name }},{% for i in action.invoices %}\n{{ i.number }} {{ i.amount_open }} {{ i.currency }} ({{ i.days_overdue }} days){% endfor %}\nOpen: {% for t in totals.by_currency %}{{ t.open_amount }} {{ t.currency }} {% endfor %}\n{{ sender.name }}',
    });
    for (let k = 0; k < 10; k++) {
      const seg = await call('POST', '/v2/customer-segments', { name: `Ending ${k}`, priority: k + 1, conditions: { any: [{ field: 'name', op: 'contains', value: `${k}` }] } });
      await call('POST', '/v2/collection-policies', { name: `Policy ${k}`, segment_id: seg.id, is_enabled: true, steps: STEPS.map((s) => ({ ...s, ...(s.channel === 'email' ? { email_template_id: tpl.id } : {}) })) });
    }

    // the worker loads a prebuilt workflow bundle, as in production (no bundler in its memory)
    const bundlePath = path.resolve('var', 'bench', `collections-run-bundle-${process.pid}.js`);
    writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } })).code);
    worker = spawn(process.execPath, ['--import', 'tsx', 'services/admin/src/worker.ts'], { env: { ...process.env, ...e, LOG_LEVEL: 'warn', WORKFLOW_BUNDLE_PATH: bundlePath }, stdio: ['ignore', 'ignore', 'inherit'] });
    const waitRun = async (id: string) => {
      for (;;) {
        const r = await call('GET', `/v2/collections/runs/${id}`);
        if (r.status !== 'running') return r;
        await new Promise((res) => setTimeout(res, 500));
      }
    };

    // the worker's resident size once it is up and idle: after a dry run as of 300 days ago (no invoice is due for a step yet then)
    const longAgo = new Date(Date.now() - 300 * 86_400_000).toISOString().slice(0, 10);
    await waitRun((await call('POST', '/v2/collections/runs', { dry_run: true, as_of_date: longAgo })).id);
    const idle = memoryOf(worker.pid!);
    log(`worker idle: ${idle.rss_mb} MB`);
    log('dry run');
    const dry = await waitRun((await call('POST', '/v2/collections/runs', { dry_run: true })).id);
    const planS = (Date.parse(dry.completed_at) - Date.parse(dry.started_at)) / 1000;
    log(`dry run ${dry.status}: ${dry.planned} planned, ${dry.skipped} skipped in ${planS.toFixed(1)} s`);
    const afterDry = memoryOf(worker.pid!);

    // the bare SMTP reference before the real run, on the same sink holding as little mail (MailDev slows as it fills)
    const bareMail = await bareSmtp(mail.smtpUrl, Number(process.env.BARE_EMAILS ?? 5000), 1000);
    log(`bare SMTP: ${bareMail.emails} emails in ${bareMail.s} s = ${bareMail.emails_per_s}/s`);

    log('real run');
    const real = await waitRun((await call('POST', '/v2/collections/runs', {})).id);
    const { rows: [sent] } = await client.query<{ n: string; first: Date; last: Date; started: Date }>(
      `SELECT count(*) AS n, min(m.sent_at) AS first, max(m.sent_at) AS last, (SELECT started_at FROM admin.collection_runs WHERE id = $1) AS started
       FROM admin.collection_messages m JOIN admin.collection_actions a ON a.id = m.action_id WHERE a.run_id = $1 AND m.status = 'sent'`,
      [real.id],
    );
    const emails = Number(sent!.n);
    const sendS = (sent!.last.getTime() - sent!.first.getTime()) / 1000;
    const runS = (Date.parse(real.completed_at) - Date.parse(real.started_at)) / 1000;
    const perSecond = emails / Math.max(sendS, 0.001);
    log(`real run ${real.status}: ${real.sent} sent (${emails} emails), ${real.failed} failed, ${real.skipped} skipped; emails over ${sendS.toFixed(1)} s = ${perSecond.toFixed(0)}/s; run ${runS.toFixed(1)} s`);
    const afterReal = memoryOf(worker.pid!);
    const mailCount = ((await (await fetch(`${mail.webUrl}/email`)).json()) as { to?: { address: string }[] }[]).filter((m) => m.to?.[0]?.address.endsWith('@bench.example')).length;
    const bare = await bareScan(e.DATABASE_URL!, orgId);
    log(`bare scan: ${bare.rows} invoices in ${bare.ms.toFixed(0)} ms, peak ${bare.peak_rss_mb} MB; worker peak ${afterReal.peak_rss_mb} MB`);
    await client.end();

    const report = {
      benchmark: 'collections-run',
      machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)), node: process.version },
      volume: { customers: VOLUME.customers, open_invoices: VOLUME.open, segments: 10, steps_per_policy: STEPS.length },
      generation_s: round1(generationS),
      dry_run: { status: dry.status, planned: dry.planned, skipped: dry.skipped, plan_s: round1(planS), bare_scan_s: round1(bare.ms / 1000), targets: { max_s: 60, met: planS <= 60 } },
      real_run: {
        status: real.status,
        sent: real.sent,
        failed: real.failed,
        skipped: real.skipped,
        emails,
        emails_in_smtp_sink: mailCount,
        first_to_last_email_s: round1(sendS),
        emails_per_s: round1(perSecond),
        run_s: round1(runS),
        targets: { min_emails_per_s: 200, met: perSecond >= 200 },
        bare_reference: { what: '1,000-character emails straight to the same SMTP sink before the real run, nodemailer pooled (8 connections), 32 in flight', ...bareMail },
      },
      worker_memory: {
        idle,
        after_dry_run: afterDry,
        after_real_run: afterReal,
        bare_reference: { what: 'one process reading every open invoice in one query', ...bare },
        growth_over_idle_mb: round1(afterReal.peak_rss_mb - idle.rss_mb),
        bare_reference_growth_mb: round1(bare.peak_rss_mb - bare.idle_rss_mb),
        targets: { growth_below_bare_reference_growth: afterReal.peak_rss_mb - idle.rss_mb < bare.peak_rss_mb - bare.idle_rss_mb },
      },
    };
    log(JSON.stringify(report));
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/collections-run.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/collections-run.json');
  } finally {
    if (worker && worker.exitCode === null) worker.kill('SIGTERM');
    await stack?.close();
    await mail.stop().catch(() => {});
    await env.stop().catch(() => {});
  }
}
