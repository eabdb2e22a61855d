/**
 * `npm run bench -- templates` (results: bench/results/templates.json), the preview throughput target:
 * template preview ≥ 2,000 renders per second.
 *
 * The admin API and the gateway each in their own process (as deployed); one organization, one
 * folder and one template whose subject and body use the variable catalogue the way a dunning email
 * does (customer fields, a loop over the open invoices with filters, totals, sender, organization).
 * autocannon POSTs /v1/email-templates/{id}/preview (the documented sample customer) through the
 * gateway for DURATION_S seconds at 1 and 16 connections; every answer must be 200 with the
 * rendered text, and one answer is checked against the expected rendering. CPU per request is
 * reported per process and for the whole machine (load generator, PostgreSQL and the kernel's loopback
 * TCP included): on 2 cores, N requests per second need at most 2,000 / N ms of it each.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import autocannon from 'autocannon';
import { connectTemporal, createDb, createTemplateEngine } from '@rp/platform';
import { sampleContext } from '../services/admin/src/domain/collections/liquid.js';
import { onboardOrganization } from '@rp/admin';
import { startBenchEnvironment } from './support/environment.js';
import { cpuMsOf, machineBusyMs, serveInChild } from './support/process.js';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);

const SUBJECT = 'Payment reminder for {{ customer.name }} ({{ customer.account_number }})';
const BODY = `Dear {{ customer.name }},

according to our records the following invoices are open:
{% for invoice in invoices %}- {{ invoice.number }} of {{ invoice.document_date }}, due {{ invoice.due_date }}: {{ invoice.amount_open }} {{ invoice.currency }}{% if invoice.is_overdue %} ({{ invoice.days_overdue }} days overdue){% endif %}
{% endfor %}
Open in total: {{ totals.open_amount }}; overdue: {{ totals.overdue_amount }}.

{{ sender.name | default: "Accounts receivable" }}
{{ organization.name | upcase }}`;

export async function run(): Promise<void> {
  const env = await startBenchEnvironment('templates');
  const stops: Array<() => Promise<void>> = [env.stop];
  try {
    const admin = await serveInChild('admin-api', env.env);
    stops.unshift(admin.stop);
    const gateway = await serveInChild('gateway', { ...env.env, ADMIN_URL: `http://127.0.0.1:${admin.port}`, RATE_LIMIT_PER_SECOND: '0' });
    stops.unshift(gateway.stop);

    const temporal = await connectTemporal({ address: env.env.TEMPORAL_ADDRESS!, namespace: env.env.TEMPORAL_NAMESPACE! });
    const db = createDb({ url: env.env.DATABASE_URL!, schema: 'admin', poolMax: 1 });
    const org = await onboardOrganization(
      { db, temporal: temporal.client },
      { name: 'Templates bench', base_currency: 'EUR', timezone: 'UTC', admin: { email: 'templates@example.com', name: 'Bench' } },
    );
    await db.destroy();
    await temporal.close();

    const base = `http://127.0.0.1:${gateway.port}`;
    const headers = { authorization: `Bearer ${org.accessToken.token}`, 'content-type': 'application/json' };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(base + path, { method: 'POST', headers, body: JSON.stringify(body) });
      type Answer = { id: string; preview_subject?: string | null; preview_body?: string | null };
      const json = (await res.json()) as Answer & { data?: Answer };
      if (res.status !== 200 && res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`);
      return json.data ?? json;
    };
    const folder = await post('/v1/email-template-folders', { name: 'Dunning' });
    const template = await post('/v1/email-templates', { folder_id: folder.id, name: 'First reminder', subject: SUBJECT, body: BODY });
    const path = `/v1/email-templates/${template.id}/preview`;
    const sample = await post(path, {});
    if (!sample.preview_subject?.includes('Sample Customer GmbH') || !sample.preview_body?.includes('INV-1001')) {
      throw new Error(`unexpected preview: ${JSON.stringify(sample).slice(0, 500)}`);
    }

    const measure = async (connections: number) => {
      const opts = { url: base, connections, duration: DURATION_S, pipelining: 1, requests: [{ method: 'POST' as const, path, headers, body: '{}' }] };
      await autocannon({ ...opts, duration: 2 }); // warm-up
      const cpuBefore = { admin: cpuMsOf(admin.child.pid), gateway: cpuMsOf(gateway.child.pid), client: cpuMsOf(process.pid), machine: machineBusyMs() };
      const r = await autocannon(opts);
      const cpuAfter = { admin: cpuMsOf(admin.child.pid), gateway: cpuMsOf(gateway.child.pid), client: cpuMsOf(process.pid), machine: machineBusyMs() };
      // CPU time per answered request of each server process (user + system, from /proc): what a
      // request costs independent of how busy the shared machine was.
      const perRequest = (before: number | null, after: number | null) =>
        before === null || after === null || !r.requests.total ? null : Number(((after - before) / r.requests.total).toFixed(3));
      return {
        renders_per_s: Math.round(r.requests.average),
        latency_mean_ms: Number(r.latency.average.toFixed(2)),
        latency_p99_ms: r.latency.p99,
        non_2xx: r.non2xx,
        errors: r.errors,
        requests: r.requests.total,
        // machine: every core, process and the kernel (load generator, PostgreSQL and loopback TCP included):
        // 2 cores give 2,000 ms per second, so 2,000 requests per second need at most 1 ms each.
        cpu_ms_per_request: {
          admin: perRequest(cpuBefore.admin, cpuAfter.admin),
          gateway: perRequest(cpuBefore.gateway, cpuAfter.gateway),
          client: perRequest(cpuBefore.client, cpuAfter.client),
          machine: perRequest(cpuBefore.machine, cpuAfter.machine),
        },
      };
    };
    const c1 = await measure(1);
    process.stdout.write(`c=1: ${JSON.stringify(c1)}\n`);
    const c16 = await measure(16);
    process.stdout.write(`c=16: ${JSON.stringify(c16)}\n`);
    if (c1.non_2xx || c16.non_2xx || c1.errors || c16.errors) throw new Error('previews failed during the measurement');

    // The Liquid engine alone, in this process: parse once, render the same context repeatedly (what a
    // batch of emails of one template costs), for comparison with the HTTP figure above.
    const engine = createTemplateEngine();
    const parsed = { subject: engine.parse(SUBJECT), body: engine.parse(BODY) };
    const context = sampleContext({ name: 'Templates bench', base_currency: 'EUR' }, { name: 'Bench', email: 'templates@example.com' }, new Date().toISOString().slice(0, 10));
    for (let i = 0; i < 500; i++) await engine.render(parsed.body, context); // warm-up
    const engineStart = performance.now();
    let renders = 0;
    while (performance.now() - engineStart < 3000) {
      await engine.render(parsed.subject, context);
      await engine.render(parsed.body, context);
      renders++;
    }
    const engineRendersPerS = Math.round(renders / ((performance.now() - engineStart) / 1000));
    process.stdout.write(`engine: ${engineRendersPerS} renders/s (subject + body)\n`);

    const report = {
      benchmark: 'templates',
      endpoint: `POST /v1/email-templates/{id}/preview (sample customer) through the gateway`,
      duration_s: DURATION_S,
      machine: { cpus: os.cpus().length, node: process.version, load_avg_1m: Number(os.loadavg()[0].toFixed(2)) },
      template: { subject_chars: SUBJECT.length, body_chars: BODY.length, rendered_body_chars: sample.preview_body!.length },
      c1,
      c16,
      engine_only: { renders_per_s: engineRendersPerS, note: 'subject + body rendered by the kernel Liquid engine in one process, templates parsed once' },
      // What the machine can give: all its cores' CPU time divided by what one preview costs the machine,
      // and the same if rendering cost nothing (the rest is HTTP through the gateway, identity, one read).
      ceiling: (() => {
        const machineMs = c16.cpu_ms_per_request.machine;
        const renderMs = 1000 / engineRendersPerS;
        const budget = os.cpus().length * 1000;
        return machineMs === null
          ? null
          : {
              machine_cpu_ms_per_preview: machineMs,
              render_cpu_ms_per_preview: Number(renderMs.toFixed(3)),
              previews_per_s_at_full_cpu: Math.round(budget / machineMs),
              previews_per_s_if_rendering_were_free: Math.round(budget / (machineMs - renderMs)),
            };
      })(),
      target: { renders_per_s: 2000 },
      met: c16.renders_per_s >= 2000,
      generated_at: new Date().toISOString(),
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/templates.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
}
