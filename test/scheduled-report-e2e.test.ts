/**
 * The scheduled report end to end with the real AR aging build: an organization's invoices
 * pushed through the middleware endpoints, a report config, send-now through the gateway, and the email in
 * the real SMTP sink (MailDev) with the XLSX and CSV attached; the amounts in the attachments equal the
 * hand-computed buckets, a formula-injection customer name is neutralised in the CSV, and the summary table
 * in the HTML body carries the totals. Real admin and cash-app workers, real Postgres, Temporal and S3.
 * No SQL: everything goes through the API.
 *
 * Daylight-saving days of 2026: the config's real Temporal Schedule is backfilled over the day (Temporal
 * starts the actions its calendar makes for those past instants, as it would have live): a time in the
 * repeated hour sends one email, a time in the skipped hour sends one (at the first valid minute).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { connectTemporal, type TemporalHandle } from '@rp/platform';
import { ScheduleOverlapPolicy } from '@temporalio/client';
import { reportScheduleId, scheduledReportWorkflowId, type ScheduledReportResult } from '@rp/workflows';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let org: Org;
let temporal: TemporalHandle;

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'] });
  org = await stack.onboard('Aging Mail Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

async function attachment(mail: any, filename: string): Promise<Buffer> {
  const a = mail.attachments.find((x: any) => x.fileName === filename);
  expect(a, filename).toBeDefined();
  const res = await fetch(`${inject('mailApiUrl')}/email/${mail.id}/attachment/${encodeURIComponent(a.generatedFileName ?? a.fileName)}`);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('AR aging report by email', () => {
  it('sends the real AR aging report with both files; their amounts equal the hand-computed buckets', async () => {
    // Due dates relative to today in the organization's timezone (send-now reports as of today).
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
    const due = (daysPastDue: number) => new Date(Date.parse(`${today}T00:00:00Z`) - daysPastDue * 86_400_000).toISOString().slice(0, 10);
    let n = 0;
    const inv = (customer: string, daysPastDue: number, amount: number) => {
      n++;
      return invoiceRecord({ document_number: `E2E-${n}`, reference: `E2E-${n}`, customer_code: customer, net_due_date: due(daysPastDue), amount_in_document_currency: amount, amount_in_local_currency: amount });
    };
    const evil = '=HYPERLINK("http://evil.example","x")';
    const c = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'K-1', name1: 'Kunde Eins GmbH' }), customerRecord({ customer_code: 'K-2', name1: evil })]);
    expect(c.body.results.every((r) => r.success)).toBe(true);
    // K-1: current −5 d 100.00; 1–30: 10 d 200.00; 31–60: 45 d 300.00; 91–120: 100 d 50.25 → 650.25
    // K-2: over 120: 200 d 10.00 → 10.00.   Overall 660.25.
    const i = await pushInvoices(stack, org.apiKey, [inv('K-1', -5, 100), inv('K-1', 10, 200), inv('K-1', 45, 300), inv('K-1', 100, 50.25), inv('K-2', 200, 10)]);
    expect(i.body.results.every((r) => r.success), JSON.stringify(i.body.results)).toBe(true);

    const to = `aging.${randomBytes(4).toString('hex')}@example.com`;
    const config = await stack.request('POST', '/v2/report-configs', { token: org.token, body: { report_type: 'ar_aging_report', frequency: 'daily', time: '07:30', recipient_emails: [to] } });
    expect(config.status).toBe(200);
    const sent = await stack.request('POST', `/v2/report-configs/${config.body.id}/send`, { token: org.token });
    expect(sent.status).toBe(200);
    const result = await temporal.client.workflow.getHandle(scheduledReportWorkflowId(config.body.id, sent.body.id)).result();
    expect(result).toMatchObject({ status: 'sent', runId: sent.body.id });

    const runs = await stack.request('GET', `/v2/report-configs/${config.body.id}/runs`, { token: org.token });
    expect(runs.body.data[0]).toMatchObject({ id: sent.body.id, status: 'sent', as_of_date: today, row_count: 2, counts: { customers: 2, total_open_lc_cents: 66025 } });

    const [mail] = await waitForMail(to);
    expect(mail.subject).toBe(`Aging Mail Org: AR aging report as of ${today}`);
    expect(mail.attachments.map((a: any) => a.fileName)).toEqual([`ar-aging-${today}.xlsx`, `ar-aging-${today}.csv`]);
    expect(mail.html).toContain('660.25');

    const csv = parse((await attachment(mail, `ar-aging-${today}.csv`)).toString('utf8')) as string[][];
    const byName = new Map(csv.slice(1).map((r) => [r[0], r]));
    // Current, 1–30, 31–60, 61–90, 91–120, over 120, total, open invoices
    expect(byName.get('Kunde Eins GmbH')!.slice(3, 11)).toEqual(['100.00', '200.00', '300.00', '0.00', '50.25', '0.00', '650.25', '4']);
    expect(byName.get(`'${evil}`)!.slice(3, 11)).toEqual(['0.00', '0.00', '0.00', '0.00', '0.00', '10.00', '10.00', '1']);
    expect([...byName.keys()].every((name) => !/^[=+\-@]/.test(name))).toBe(true);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await attachment(mail, `ar-aging-${today}.xlsx`)) as unknown as ArrayBuffer);
    const rows: ExcelJS.CellValue[][] = [];
    wb.getWorksheet('AR aging')!.eachRow((row) => rows.push((row.values as ExcelJS.CellValue[]).slice(1)));
    const k1 = rows.find((r) => r[0] === 'Kunde Eins GmbH')!;
    expect(k1.slice(3, 10).map((v) => v ?? 0)).toEqual([100, 200, 300, 0, 50.25, 0, 650.25]);
  }, 180_000);
});

/** The actions Temporal started for `scheduleId` once `count` of them are recorded (or what is there after 30 s). */
async function actionsOf(scheduleId: string, count: number) {
  const handle = temporal.client.schedule.getHandle(scheduleId);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const actions = (await handle.describe()).info.recentActions;
    if (actions.length >= count || Date.now() > deadline) return actions;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('scheduled reports on the daylight-saving days of 2026', () => {
  const cases = [
    // Temporal starts both instants of 01:30 in New York's repeated hour (05:30Z and 06:30Z)
    { zone: 'America/New_York', change: 'autumn', time: '01:30', from: '2026-11-01T04:00:00Z', to: '2026-11-01T08:00:00Z', date: '2026-11-01', actions: 2 },
    { zone: 'America/New_York', change: 'spring', time: '02:30', from: '2026-03-08T05:00:00Z', to: '2026-03-08T09:00:00Z', date: '2026-03-08', actions: 1 },
    { zone: 'Europe/Berlin', change: 'autumn', time: '02:30', from: '2026-10-24T23:00:00Z', to: '2026-10-25T03:00:00Z', date: '2026-10-25', actions: 1 },
    { zone: 'Europe/Berlin', change: 'spring', time: '02:30', from: '2026-03-28T23:00:00Z', to: '2026-03-29T03:00:00Z', date: '2026-03-29', actions: 1 },
  ];
  for (const c of cases) {
    it(`${c.zone}, ${c.change} change ${c.date}: a daily report at ${c.time} sends exactly one email`, async () => {
      const o = await stack.onboard(`DST ${c.zone} ${c.change}`);
      expect((await stack.request('PATCH', '/v2/organization', { token: o.token, body: { timezone: c.zone } })).status).toBe(200);
      const to = `dst.${randomBytes(4).toString('hex')}@example.com`;
      const config = await stack.request('POST', '/v2/report-configs', { token: o.token, body: { report_type: 'ar_aging_report', frequency: 'daily', time: c.time, recipient_emails: [to] } });
      expect(config.status).toBe(200);
      const scheduleId = reportScheduleId(o.organizationId, 'ar_aging_report');
      await temporal.client.schedule.getHandle(scheduleId).backfill({ start: new Date(c.from), end: new Date(c.to), overlap: ScheduleOverlapPolicy.ALLOW_ALL });

      const actions = await actionsOf(scheduleId, c.actions);
      expect(actions).toHaveLength(c.actions);
      const results = (await Promise.all(actions.map((a) => temporal.client.workflow.getHandle(a.action.workflow.workflowId).result()))) as ScheduledReportResult[];
      expect(results.filter((r) => r.status === 'sent')).toHaveLength(1);
      // every workflow has finished, so every email it sent is in the sink
      const mails = await waitForMail(to, { count: 2, timeoutMs: 1 });
      expect(mails).toHaveLength(1);
      expect(mails[0].subject).toBe(`DST ${c.zone} ${c.change}: AR aging report as of ${c.date}`);
      const runs = await stack.request('GET', `/v2/report-configs/${config.body.id}/runs`, { token: o.token });
      expect(runs.body.data.map((r: any) => [r.status, r.as_of_date])).toEqual([['sent', c.date]]);
    }, 180_000);
  }
});
