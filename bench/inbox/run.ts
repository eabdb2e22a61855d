/**
 * `npm run bench -- inbox [--seed N]` (results: bench/results/inbox.json).
 *
 * The labelled corpus (bench/inbox/corpus.ts: 500 messages, 336 remittance advices from 24 payer
 * house styles and the rest of an AR inbox) through the real stack: embedded Postgres, a Temporal dev
 * server, versitygw as object storage, MailDev as the outbound SMTP sink, every service API and the
 * gateway in this process, the inbound SMTP server, and the admin and cash-app workers each in a
 * child process of its own (a prebuilt workflow bundle, as in production).
 *  1. the ERP middleware pushes the ledger (96 customers, their invoices); an admin turns
 *     auto-assign on at the default threshold (80); a real collections run emails a reminder to every
 *     customer, and the replies and bounces in the corpus thread to those Message-IDs;
 *  2. bare references, measured in this run before the real delivery: the same messages only parsed
 *     in this process (postal-mime + the kernel's attachmentText of every attachment), and only
 *     accepted by a bare smtp-server that discards them, with the same client settings;
 *  3. every message sent over SMTP (nodemailer, BENCH_INBOX_CONNECTIONS pooled connections, default 8,
 *     twice as many messages in flight) to
 *     `ar@<the organization's inbound host>`; the run waits until every message is processed;
 *  4. results read through the API (GET /v2/inbox/messages, GET /v1/remittances) and scored
 *     (bench/inbox/score.ts): customer match precision and recall at 80, remittance lines with invoice
 *     number and amount exact, category accuracy, messages per second from the first send to the
 *     last message processed, overall and per house style.
 * Targets (the issue's): precision ≥ 0.99 with recall ≥ 0.9; lines exact ≥ 0.97; categories ≥ 0.95;
 * ≥ 20 messages/s end to end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { connectTemporal, createDb } from '@rp/platform';
import { loadAdminConfig, onboardOrganization, startInboundSmtp, type RunningInboundSmtp } from '@rp/admin';
import { workflowsPath } from '@rp/workflows/paths';
import { startMailDev } from '../../scripts/local/components.js';
import { startObjectStorage } from '../../scripts/local/object-storage.js';
import { startBenchEnvironment } from '../support/environment.js';
import { startApisAndGateway, type BenchApis } from '../support/stack.js';
import { configureMailbox, pushLedger, readInbox, readRemittances, remindersByRecipient, sendReminders, type Target } from './api.js';
import { DEFAULT_SEED, generateCorpus, HOUSE_STYLES } from './corpus.js';
import { bareParse, bareSmtp, deliver, prepare } from './deliver.js';
import { scoreInbox, worstStyles } from './score.js';

const THRESHOLD = 80;
/** SMTP client: pooled connections and messages in flight (a relaying MX delivers on several connections at once) */
const CONNECTIONS = Number(process.env.BENCH_INBOX_CONNECTIONS ?? 8);
const IN_FLIGHT = 2 * CONNECTIONS;
const round1 = (x: number) => Math.round(x * 10) / 10;
const reverse = (m: Map<string, string>) => new Map([...m].map(([k, v]) => [v, k]));

function parseSeed(argv: readonly string[]): number {
  const at = argv.indexOf('--seed');
  if (at < 0) return DEFAULT_SEED;
  const n = Number(argv[at + 1]);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('--seed must be a non-negative integer');
  return n;
}

function startWorker(service: 'admin' | 'cash-app', env: Record<string, string>, bundlePath: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', `services/${service}/src/worker.ts`], { env: { ...process.env, ...env, LOG_LEVEL: 'warn', WORKFLOW_BUNDLE_PATH: bundlePath }, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function run(argv: readonly string[] = []): Promise<void> {
  const seed = parseSeed(argv);
  const started = Date.now();
  const log = (m: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  const corpus = generateCorpus(seed);
  const labels = corpus.messages.map((m) => m.label);
  const env = await startBenchEnvironment('inbox');
  const s3 = await startObjectStorage({ dataDir: path.resolve('var', 'bench', `inbox-s3-${process.pid}`), accessKeyId: `bench-${randomBytes(6).toString('hex')}`, secretAccessKey: randomBytes(24).toString('base64url') });
  const mail = await startMailDev({ mailDir: path.resolve('var', 'bench', `inbox-mail-${process.pid}`) });
  let stack: BenchApis | undefined;
  let inbound: RunningInboundSmtp | undefined;
  const workers: ChildProcess[] = [];
  try {
    const e: Record<string, string> = {
      ...env.env,
      DATABASE_POOL_MAX: '10',
      SMTP_URL: mail.smtpUrl,
      MAIL_FROM: 'Nordlicht Vertrieb GmbH <ar@nordlicht-vertrieb.example>',
      MAIL_INBOUND_DOMAIN: 'inbound.bench.example',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: 'bench-inbox',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_REGION: s3.region,
    };
    stack = await startApisAndGateway(e);
    const bundlePath = path.resolve('var', 'bench', `inbox-bundle-${process.pid}.js`);
    writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath, logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } })).code);
    workers.push(startWorker('admin', e, bundlePath), startWorker('cash-app', e, bundlePath));

    const temporal = await connectTemporal({ address: e.TEMPORAL_ADDRESS!, namespace: e.TEMPORAL_NAMESPACE! });
    const adminDb = createDb({ url: e.DATABASE_URL!, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization({ db: adminDb, temporal: temporal.client }, { name: 'Nordlicht Vertrieb GmbH', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'ar.lead@nordlicht-vertrieb.example', name: 'AR Lead' } }).finally(async () => {
      await adminDb.destroy();
      await temporal.close();
    });
    const t: Target = { baseUrl: stack.gatewayUrl, token: org.accessToken.token, apiKey: org.apiKey.token };
    const ids = await pushLedger(t, corpus.ledger);
    log(`pushed ${ids.partners.size} customers, ${ids.invoices.size} invoices`);
    const host = await configureMailbox(t, THRESHOLD);
    const { run: reminderRun } = await sendReminders(t);
    const reminders = await remindersByRecipient(mail.webUrl);
    log(`reminders: run ${String(reminderRun.status)}, ${String(reminderRun.sent)} sent, ${reminders.size} in the outbound sink; inbound host ${host}`);
    inbound = await startInboundSmtp(loadAdminConfig(e), { port: 0, host: '127.0.0.1' });
    const prepared = await prepare(corpus.messages, corpus.ledger, reminders);

    const parseOnly = await bareParse(prepared.out);
    log(`bare parse: ${parseOnly.messages} messages in ${parseOnly.s} s = ${parseOnly.messages_per_s}/s`);
    const smtpOnly = await bareSmtp(prepared.out, CONNECTIONS, IN_FLIGHT);
    log(`bare SMTP acceptance: ${smtpOnly.messages} messages in ${smtpOnly.s} s = ${smtpOnly.messages_per_s}/s`);

    const delivery = await deliver('127.0.0.1', inbound.port, `ar@${host}`, prepared.out, CONNECTIONS, IN_FLIGHT);
    log(`delivered ${delivery.sent} (refused ${delivery.refused.length}) in ${((delivery.finished_at - delivery.started_at) / 1000).toFixed(1)} s`);
    const codeOf = reverse(ids.partners);
    // the wait watches the table itself (one cheap count a second) so that polling the API does not load
    // the process that also runs the SMTP listener; the results are then read through the API
    const deadline = Date.now() + Number(process.env.BENCH_INBOX_TIMEOUT_S ?? 1200) * 1000;
    const db = new pg.Client({ connectionString: e.DATABASE_URL });
    await db.connect();
    try {
      for (;;) {
        const { rows: [c] } = await db.query<{ total: string; pending: string }>(
          `SELECT count(*) AS total, count(*) FILTER (WHERE processing_state = 'received') AS pending FROM admin.inbox_messages WHERE organization_id = $1`,
          [org.organization.id],
        );
        const done = Number(c!.total) >= delivery.sent && Number(c!.pending) === 0;
        if (done || Date.now() > deadline) {
          log(`${c!.total} messages in the inbox, ${c!.pending} still received${done ? '' : ' (timed out)'}`);
          break;
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    } finally {
      await db.end();
    }
    const inbox = await readInbox(t, codeOf);
    const observedAt = Date.now();
    const remittances = await readRemittances(t, reverse(ids.invoices));
    const score = scoreInbox(labels, inbox.messages, remittances, THRESHOLD);
    const endToEndS = (Math.min(inbox.lastModified, observedAt) - delivery.started_at) / 1000;
    const perSecond = labels.length / endToEndS;
    const o = score.overall;
    log(`customer match at ${THRESHOLD}: precision ${o.precision}, recall ${o.recall} (answers ${score.answers.recall}); lines exact ${o.lines_exact}/${o.lines} = ${o.lines_exact_share}; categories ${o.category_accuracy}; ${round1(perSecond)} messages/s`);

    const report = {
      benchmark: 'inbox',
      seed,
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)), node: process.version, note: 'shared machine: other jobs ran concurrently' },
      corpus: {
        messages: labels.length,
        remittance_advices: labels.filter((l) => l.category === 'remittance').length,
        house_styles: HOUSE_STYLES.length,
        remittance_lines: o.lines,
        customers: corpus.ledger.customers.length,
        invoices: corpus.ledger.invoices.length,
        replies_to_reminders: labels.filter((l) => l.reply_to_reminder).length,
        replies_left_unthreaded: prepared.unthreaded,
      },
      targets: {
        precision: { min: 0.99, value: o.precision, met: (o.precision ?? 0) >= 0.99 },
        recall: { min: 0.9, value: o.recall, met: (o.recall ?? 0) >= 0.9 },
        lines_exact: { min: 0.97, value: o.lines_exact_share, met: (o.lines_exact_share ?? 0) >= 0.97 },
        category_accuracy: { min: 0.95, value: o.category_accuracy, met: o.category_accuracy >= 0.95 },
        messages_per_s: { min: 20, value: round1(perSecond), met: perSecond >= 20 },
      },
      throughput: {
        what: 'first SMTP send to the last message processed (its modified_at), all messages',
        end_to_end_s: round1(endToEndS),
        messages_per_s: round1(perSecond),
        smtp_delivery_s: round1((delivery.finished_at - delivery.started_at) / 1000),
        refused: delivery.refused,
        bare_parse: { what: 'postal-mime + kernel attachmentText of every attachment, in-process, one message after the other', ...parseOnly },
        bare_smtp: { what: `a bare smtp-server that reads and discards, same nodemailer client (${CONNECTIONS} pooled connections, ${IN_FLIGHT} in flight)`, ...smtpOnly },
      },
      recorded: { what: 'promises to pay and disputes recorded from their messages (not only suggested)', ...score.recorded },
      answers: { what: 'recall over the customers\' own answers (auto-replies and bounces left out)', ...score.answers },
      thresholds: score.thresholds,
      overall: o,
      worst_styles: worstStyles(score, 6),
      per_category: score.per_category,
      per_style: score.per_style,
      misses: score.misses,
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/inbox.json', JSON.stringify(report, null, 2) + '\n');
    log('written bench/results/inbox.json');
  } finally {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGTERM');
    await inbound?.close().catch(() => {});
    await stack?.close();
    await mail.stop().catch(() => {});
    await s3.stop().catch(() => {});
    await env.stop().catch(() => {});
  }
}
