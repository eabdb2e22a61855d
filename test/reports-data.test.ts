/**
 * Report data and files: buildArAgingReport (cash-app worker) and buildIntegrationSyncReport
 * (integrations worker), called the way the scheduled-report workflow calls them — from a workflow,
 * on the owning service's task queue, executed by that service's real worker — against the run's real
 * Postgres and real S3 (versitygw). The files are read back from object storage (XLSX with exceljs,
 * CSV with csv-parse) and compared with hand-computed figures.
 *
 * Set-up is all through the API: business units, customers and invoices via the middleware push
 * endpoints, exchange rates via PUT /v2/exchange-rates, QuickBooks connections and syncs via the
 * connection endpoints against the fake QuickBooks. One exception, as in integrations-sync.test.ts:
 * a running sync is cancelled with cancelRunningSyncs (what a connection DELETE does first; no
 * endpoint cancels a sync and keeps the connection and its runs). One kernel-level check reads the
 * aging through the ledger module directly, with a tiny cursor page size (no API sets it).
 */
import { createHash, randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { NativeConnection, Worker } from '@temporalio/worker';
import { arAgingPages, connectTemporal, createDb, createReportFilesPool, neutralizeFormula, formatMinorUnits, ObjectStorage, withLedgerSnapshot, WorkerPoolBusyError, writeReportFiles, type ArAgingRow, type TemporalHandle } from '@rp/platform';
import { REPORT_BUILD_TASK_QUEUE, reportObjectPrefix, type BuildReportInput, type BuiltReport, type ReportBuildActivities } from '@rp/workflows';
import { cancelRunningSyncs } from '../services/integrations/src/domain/sync-schedule.js';
import { withoutAddresses } from '../services/integrations/src/domain/sync-report.js';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices, type InvoiceRecord } from './support/ledger.js';
import { qboCustomer, qboInvoice, startFakeQuickbooks, type FakeQuickbooks, type QboRecord } from './support/fake-quickbooks.js';

const REDIRECT_URI = 'https://app.example.com/oauth/callback';
const OLD = '2026-01-10T08:00:00Z';
const TEST_QUEUE = `report-build-test-${randomBytes(4).toString('hex')}`;

let stack: TestStack;
let fake: FakeQuickbooks;
let temporal: TemporalHandle;
let testWorker: Worker;
let testWorkerDone: Promise<void>;
let storage: ObjectStorage;

async function build(activity: keyof ReportBuildActivities, input: BuildReportInput): Promise<BuiltReport> {
  const type = activity === 'buildArAgingReport' ? 'ar_aging_report' : 'integration_sync_report';
  return temporal.client.workflow.execute('buildReportForTest', {
    taskQueue: TEST_QUEUE,
    workflowId: `report-build-test-${randomBytes(6).toString('hex')}`,
    args: [activity, REPORT_BUILD_TASK_QUEUE[type], input],
  });
}

function input(org: Org, over: Partial<BuildReportInput> = {}): BuildReportInput {
  return {
    organizationId: org.organizationId,
    configId: '019a0000-0000-7000-8000-00000000c0f1',
    runId: `019a0000-0000-7000-8000-${randomBytes(6).toString('hex')}`,
    timezone: 'Europe/Berlin',
    asOfDate: '2026-12-31',
    periodStart: '2026-01-01T00:00:00Z',
    periodEnd: '2027-01-01T00:00:00Z',
    ...over,
  };
}

async function download(key: string): Promise<Buffer> {
  const bytes = await storage.getObjectBytes(key);
  expect(bytes, key).not.toBeNull();
  return Buffer.from(bytes!);
}

/** The artifacts are what is stored: size and sha256 of the bytes in object storage. */
async function readArtifacts(built: BuiltReport) {
  const [xlsxArt, csvArt] = built.artifacts;
  expect(xlsxArt!.contentType).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  expect(csvArt!.contentType).toMatch(/^text\/csv/);
  const xlsxBytes = await download(xlsxArt!.objectKey);
  const csvBytes = await download(csvArt!.objectKey);
  for (const [a, bytes] of [[xlsxArt!, xlsxBytes], [csvArt!, csvBytes]] as const) {
    expect(a.size).toBe(bytes.length);
    expect(a.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  }
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(xlsxBytes as unknown as ArrayBuffer);
  const csv = parse(csvBytes.toString('utf8'), { relax_column_count: false }) as string[][];
  return { wb, csv, csvText: csvBytes.toString('utf8') };
}

function sheetRows(wb: ExcelJS.Workbook, name: string): ExcelJS.CellValue[][] {
  const ws = wb.getWorksheet(name);
  expect(ws, name).toBeDefined();
  const rows: ExcelJS.CellValue[][] = [];
  ws!.eachRow((row) => rows.push((row.values as ExcelJS.CellValue[]).slice(1)));
  return rows;
}

beforeAll(async () => {
  fake = await startFakeQuickbooks();
  fake.records.Customer = Array.from({ length: 120 }, (_, i) => qboCustomer(i + 1, OLD));
  fake.records.Invoice = Array.from({ length: 130 }, (_, i) => qboInvoice(1000 + i, (i % 120) + 1, OLD, [{ qty: 1, unitPrice: 100, amount: 100 }], { TotalAmt: 100, Balance: 100 }));
  fake.records.CreditMemo = [] as QboRecord[];
  stack = await startStack({
    workers: ['cash-app', 'integrations'],
    env: {
      OAUTH_CLIENTS: JSON.stringify({ quickbooks_online: { client_id: 'qbo-client', client_secret: 'qbo-secret' } }),
      OAUTH_REDIRECT_URI: REDIRECT_URI,
      PROVIDER_URL_OVERRIDES: JSON.stringify({ quickbooks_online: { token_url: `${fake.url}/oauth2/v1/tokens/bearer`, api_base_url: fake.url } }),
    },
  });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
  const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS });
  testWorker = await Worker.create({
    connection,
    namespace: stack.namespace,
    taskQueue: TEST_QUEUE,
    workflowsPath: fileURLToPath(new URL('./support/report-build-workflow.ts', import.meta.url)),
  });
  testWorkerDone = testWorker.run().finally(() => connection.close());
  storage = new ObjectStorage({
    endpoint: stack.env.S3_ENDPOINT!,
    bucket: stack.env.S3_BUCKET!,
    accessKeyId: stack.env.S3_ACCESS_KEY_ID!,
    secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY!,
    region: stack.env.S3_REGION!,
  });
}, 180_000);

afterAll(async () => {
  if (testWorker?.getState() === 'RUNNING') testWorker.shutdown();
  await testWorkerDone?.catch(() => {});
  storage?.close();
  await temporal?.close();
  await stack?.close();
  await fake?.close();
});

// ---------------------------------------------------------------------------------------------------
// AR aging. Organization A (base EUR), as of 2026-12-31; days past due = 2026-12-31 − net due date.
//   C-1 "Alpha GmbH" (North): current −10 d 1000.00, 0 d 250.50 → 1250.50; 1–30: 1 d 100.00, 30 d 200.00 → 300.00;
//       31–60: 31 d 300.00, 60 d 400.00 → 700.00; 61–90: 61 d 500.00, 90 d 600.00 → 1100.00;
//       91–120: 91 d 700.00, 120 d 800.00 → 1500.00; over 120: 121 d 900.00. Total 5750.50 (11 invoices).
//   C-2 `=HYPERLINK("http://evil.example","click")` (South): USD 2000.00 with local 1850.00, 91 d → 91–120 1850.00;
//       current 0.10 + 0.20 = 0.30 (floats would say 0.30000000000000004). Total 1850.30.
//   C-3 "+1 Plus": North 77 d 123.45 (61–90); South 364 d 10.00 (over 120): two rows.
//   C-4 "@SUM(A1:A2)" (no business unit), documents without a local amount: EUR 75.25 current (base currency, 1:1);
//       USD 500.00 46 d → rate EUR/USD 1.25 → 400.00 in 31–60; GBP 1000.00 (no rate): not convertible, in no bucket.
//   C-5 "-2 Minus" (North): +100.00 and −150.00 current → −50.00.
// Business units: North current 1200.50, 1–30 300.00, 31–60 700.00, 61–90 1223.45, 91–120 1500.00, over 900.00 = 5823.95;
//   South current 0.30, 91–120 1850.00, over 10.00 = 1860.30; none: current 75.25, 31–60 400.00 = 475.25.
// Overall: 1276.05, 300.00, 1100.00, 1223.45, 3350.00, 910.00 = 8159.50 over 5 customers (6 rows).
// Organization B pushes a customer and an invoice that must never appear in A's report.
// ---------------------------------------------------------------------------------------------------

const HYPERLINK = '=HYPERLINK("http://evil.example","click")';
const AS_OF = '2026-12-31';
const day = (delta: number) => new Date(Date.parse(`${AS_OF}T00:00:00Z`) - delta * 86_400_000).toISOString().slice(0, 10);

describe('buildArAgingReport', () => {
  let orgA: Org;
  let orgB: Org;
  let north: string;
  let south: string;
  let seq = 0;
  const inv = (customer: string, age: number, amount: number, extra: Partial<InvoiceRecord> = {}): InvoiceRecord => {
    seq++;
    return invoiceRecord({ document_number: `AR-${seq}`, reference: `AR-${seq}`, customer_code: customer, net_due_date: day(age), amount_in_document_currency: amount, amount_in_local_currency: amount, ...extra });
  };
  const noLocal = (r: InvoiceRecord): InvoiceRecord => ({ ...r, amount_in_local_currency: undefined as unknown as number, exchange_rate: '' });

  async function push(org: Org, customers: unknown[], invoices: unknown[]) {
    const c = await pushCustomers(stack, org.apiKey, customers);
    expect(c.status).toBe(200);
    expect(c.body.results.every((r) => r.success)).toBe(true);
    const i = await pushInvoices(stack, org.apiKey, invoices);
    expect(i.status).toBe(200);
    expect(i.body.results.every((r) => r.success), JSON.stringify(i.body.results.filter((r) => !r.success))).toBe(true);
  }

  beforeAll(async () => {
    orgA = await stack.onboard('Aging A');
    orgB = await stack.onboard('Aging B');
    const u1 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'North' } });
    const u2 = await stack.request('POST', '/v2/business-units', { token: orgA.token, body: { name: 'South' } });
    expect([u1.status, u2.status]).toEqual([200, 200]);
    north = u1.body.id;
    south = u2.body.id;
    const n = { business_unit_id: north };
    const s = { business_unit_id: south };
    await push(
      orgA,
      [
        customerRecord({ customer_code: 'C-1', name1: 'Alpha GmbH' }),
        customerRecord({ customer_code: 'C-2', name1: HYPERLINK }),
        customerRecord({ customer_code: 'C-3', name1: '+1 Plus' }),
        customerRecord({ customer_code: 'C-4', name1: '@SUM(A1:A2)' }),
        customerRecord({ customer_code: 'C-5', name1: '-2 Minus' }),
      ],
      [
        ...[[-10, 1000], [0, 250.5], [1, 100], [30, 200], [31, 300], [60, 400], [61, 500], [90, 600], [91, 700], [120, 800], [121, 900]].map(([age, amount]) => ({ ...inv('C-1', age!, amount!), ...n })),
        { ...inv('C-2', 91, 2000, { currency: 'USD', exchange_rate: '0.92500', amount_in_local_currency: 1850 }), ...s },
        { ...inv('C-2', -3, 0.1), ...s },
        { ...inv('C-2', 0, 0.2), ...s },
        { ...inv('C-3', 77, 123.45), ...n },
        { ...inv('C-3', 364, 10), ...s },
        noLocal(inv('C-4', -32, 75.25)),
        noLocal(inv('C-4', 46, 500, { currency: 'USD' })),
        noLocal(inv('C-4', 16, 1000, { currency: 'GBP', document_number: 'GBP-1' })),
        { ...inv('C-5', -5, 100), ...n },
        { ...inv('C-5', -5, -150), ...n },
        // closed invoices and credit memos are not aged
        { ...inv('C-1', 200, 5000, { status_open: false, clearing_date: '2026-12-01', clearing_document_number: 'CL-1' }), ...n },
        { ...inv('C-1', 10, 7000, { debit_credit_indicator: 'H' }), ...n },
      ],
    );
    await push(orgB, [customerRecord({ customer_code: 'C-1', name1: 'Other Company' })], [inv('C-1', 45, 9999)]);
    const rates = await stack.request('PUT', '/v2/exchange-rates', {
      token: orgA.token,
      body: [
        { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-12-01', rate: '1.25' },
        { base_currency: 'EUR', quote_currency: 'USD', rate_date: '2027-01-15', rate: '2.00' }, // after the as-of date: not used
      ],
    });
    expect(rates.status, rates.text).toBe(200);
  });

  const HEADER = ['Customer', 'Account number', 'Business unit', 'Current', '1–30 days', '31–60 days', '61–90 days', '91–120 days', 'Over 120 days', 'Total', 'Open invoices', 'Not convertible invoices'];
  // [customer, unit, six buckets + total in cents, open invoices, not convertible]
  const EXPECTED: [string, string, number[], number, number][] = [
    ['Alpha GmbH', 'North', [125050, 30000, 70000, 110000, 150000, 90000, 575050], 11, 0],
    [HYPERLINK, 'South', [30, 0, 0, 0, 185000, 0, 185030], 3, 0],
    ['+1 Plus', 'North', [0, 0, 0, 12345, 0, 0, 12345], 1, 0],
    ['+1 Plus', 'South', [0, 0, 0, 0, 0, 1000, 1000], 1, 0],
    ['@SUM(A1:A2)', '', [7525, 0, 40000, 0, 0, 0, 47525], 2, 1],
    ['-2 Minus', 'North', [-5000, 0, 0, 0, 0, 0, -5000], 2, 0],
  ];
  const key = (name: unknown, unit: unknown) => `${name as string}|${(unit as string | undefined) ?? ''}`;

  let built: BuiltReport;
  let runInput: BuildReportInput;

  it('ages every open invoice in local currency into its bucket, exactly, in the XLSX and the CSV', async () => {
    runInput = input(orgA);
    built = await build('buildArAgingReport', runInput);
    expect(built.title).toBe('AR aging report as of 2026-12-31');
    expect(built.rowCount).toBe(6);
    expect(built.artifacts.map((a) => a.filename)).toEqual(['ar-aging-2026-12-31.xlsx', 'ar-aging-2026-12-31.csv']);
    const prefix = reportObjectPrefix(orgA.organizationId, runInput.configId, runInput.runId);
    expect(built.artifacts.map((a) => a.objectKey)).toEqual([`${prefix}/ar-aging-2026-12-31.xlsx`, `${prefix}/ar-aging-2026-12-31.csv`]);
    expect(built.counts).toMatchObject({
      customers: 5,
      business_units: 3,
      open_invoices: 20,
      unconvertible_invoices: 1,
      total_open_lc_cents: 815950,
      current_lc_cents: 127605,
      d1_30_lc_cents: 30000,
      d31_60_lc_cents: 110000,
      d61_90_lc_cents: 122345,
      d91_120_lc_cents: 335000,
      over_120_lc_cents: 91000,
    });

    const { wb, csv } = await readArtifacts(built);
    // CSV: the header, then one line per customer and unit; text neutralised, amounts exact decimal literals
    expect(csv[0]).toEqual(HEADER);
    const csvByKey = new Map(csv.slice(1).map((r) => [key(r[0], r[2]), r]));
    expect(csvByKey.size).toBe(6);
    for (const [name, unit, cents, count, unconvertible] of EXPECTED) {
      const row = csvByKey.get(key(neutralizeFormula(name), unit));
      expect(row, name).toBeDefined();
      expect(row!.slice(3)).toEqual([...cents.map((c) => formatMinorUnits(c)), String(count), String(unconvertible)]);
    }
    // XLSX: the same rows, amounts as numbers
    const rows = sheetRows(wb, 'AR aging');
    expect(rows[0]).toEqual(HEADER);
    const xlsxByKey = new Map(rows.slice(1).map((r) => [key(r[0], r[2]), r]));
    expect(xlsxByKey.size).toBe(6);
    for (const [name, unit, cents, count, unconvertible] of EXPECTED) {
      const row = xlsxByKey.get(key(neutralizeFormula(name), unit));
      expect(row, name).toBeDefined();
      expect(row!.slice(3).map((v) => (v === null || v === undefined ? 0 : v))).toEqual([...cents.map((c) => c / 100), count, unconvertible]);
    }
  }, 120_000);

  it('neutralises formula-injection names in the CSV and the XLSX; negative amounts stay numbers', async () => {
    const { wb, csv, csvText } = await readArtifacts(built);
    const names = csv.slice(1).map((r) => r[0]);
    expect(names).toEqual(expect.arrayContaining([`'${HYPERLINK}`, "'+1 Plus", "'@SUM(A1:A2)", "'-2 Minus", 'Alpha GmbH']));
    for (const n of names) expect(n).not.toMatch(/^[=+\-@\t\r]/);
    // the raw CSV quotes the neutralised cells; the negative amount is a plain number literal
    expect(csvText).toContain(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
    expect(csvText).toMatch(/\n"'-2 Minus",[^,]*,North,-50\.00,/);

    const ws = wb.getWorksheet('AR aging')!;
    let checked = 0;
    ws.eachRow((row, i) => {
      if (i === 1) return;
      const name = row.getCell(1);
      expect(name.type).toBe(ExcelJS.ValueType.String);
      const text = name.value as string;
      expect(text).not.toMatch(/^[=+\-@]/);
      if (text === "'-2 Minus") {
        expect(row.getCell(4).type).toBe(ExcelJS.ValueType.Number);
        expect(row.getCell(4).value).toBe(-50);
      }
      for (let c = 1; c <= row.cellCount; c++) expect(row.getCell(c).type).not.toBe(ExcelJS.ValueType.Formula);
      checked++;
    });
    expect(checked).toBe(6);
  });

  it('reports the invoice it cannot convert separately, in no sum, and totals per business unit and overall', async () => {
    const { wb } = await readArtifacts(built);
    const unconvertible = sheetRows(wb, 'Not convertible');
    expect(unconvertible.map((r) => Array.from({ length: 8 }, (_, i) => r[i] ?? null))).toEqual([
      ['Customer', 'Account number', 'Business unit', 'Document number', 'Currency', 'Open amount (document currency)', 'Net due date', 'Days past due'],
      ["'@SUM(A1:A2)", 'C-4', null, 'GBP-1', 'GBP', 1000, day(16), 16],
    ]);
    const summary = sheetRows(wb, 'Summary').map((r) => r.map((v) => (v === undefined || v === null ? 0 : v)));
    expect(summary).toEqual([
      ['Business unit', 'Customers', 'Current', '1–30 days', '31–60 days', '61–90 days', '91–120 days', 'Over 120 days', 'Total', 'Open invoices', 'Not convertible invoices'],
      ['North', 3, 1200.5, 300, 700, 1223.45, 1500, 900, 5823.95, 14, 0],
      ['South', 2, 0.3, 0, 0, 0, 1850, 10, 1860.3, 4, 0],
      ['No business unit', 1, 75.25, 0, 400, 0, 0, 0, 475.25, 2, 1],
      ['All business units', 5, 1276.05, 300, 1100, 1223.45, 3350, 910, 8159.5, 20, 1],
    ]);
    // the email's summary table: the same totals, formatted, the rate each conversion used, and the not convertible GBP on its own line
    expect(built.summaryColumns).toEqual(['Business unit', 'Customers', 'Current (EUR)', '1–30 days (EUR)', '31–60 days (EUR)', '61–90 days (EUR)', '91–120 days (EUR)', 'Over 120 days (EUR)', 'Total (EUR)', 'Not convertible invoices']);
    expect(built.summaryRows).toEqual([
      { label: 'North', values: ['3', '1,200.50', '300.00', '700.00', '1,223.45', '1,500.00', '900.00', '5,823.95', '0'] },
      { label: 'South', values: ['2', '0.30', '0.00', '0.00', '0.00', '1,850.00', '10.00', '1,860.30', '0'] },
      { label: 'No business unit', values: ['1', '75.25', '0.00', '400.00', '0.00', '0.00', '0.00', '475.25', '1'] },
      { label: 'All business units', values: ['5', '1,276.05', '300.00', '1,100.00', '1,223.45', '3,350.00', '910.00', '8,159.50', '1'] },
      // the rate the USD invoice without a local amount was converted with (not the later 2.00 one)
      { label: 'Converted to EUR: USD', values: ['', '', '', '', '', '', '', '1 USD = 0.8 EUR (stored EUR/USD rate of 2026-12-01)', ''] },
      { label: 'Not convertible to EUR: GBP', values: ['', '', '', '', '', '', '', '1,000.00 GBP', '1'] },
    ]);
  });

  it("keeps organizations apart: another organization's ledger never appears", async () => {
    const { csv, wb } = await readArtifacts(built);
    expect(csv.flat().join('|')).not.toContain('Other Company');
    expect(sheetRows(wb, 'AR aging').flat().map(String).join('|')).not.toContain('Other Company');
    const b = await build('buildArAgingReport', input(orgB));
    expect(b.rowCount).toBe(1);
    expect(b.counts).toMatchObject({ customers: 1, total_open_lc_cents: 999900, d31_60_lc_cents: 999900 });
    const { csv: csvB } = await readArtifacts(b);
    expect(csvB.slice(1).map((r) => r[0])).toEqual(['Other Company']);
  }, 60_000);

  it('streams the same rows whatever the cursor page size (kernel arAgingPages, pages of 2 rows)', async () => {
    const db = createDb({ url: stack.databaseUrl, schema: 'cash_app', poolMax: 1 });
    try {
      const q = { asOfDate: AS_OF, conversion: { currencies: ['EUR', 'USD'], factors: ['1', '0.8'] } };
      const read = (pageSize: number) =>
        withLedgerSnapshot(db, async (trx) => {
          const pages: ArAgingRow[][] = [];
          for await (const page of arAgingPages(trx, orgA.organizationId, q, pageSize)) pages.push(page);
          return pages;
        });
      const small = await read(2);
      const whole = await read(2000);
      expect(small.map((p) => p.length)).toEqual([2, 2, 2]);
      expect(whole).toHaveLength(1);
      expect(small.flat()).toEqual(whole[0]);
      expect(whole[0]!.reduce((s, r) => s + r.total, 0n)).toBe(815950n);
    } finally {
      await db.destroy();
    }
  });

  it('writes the same object keys again on a retry of the same run (idempotent)', async () => {
    const again = await build('buildArAgingReport', runInput);
    expect(again.artifacts.map((a) => a.objectKey)).toEqual(built.artifacts.map((a) => a.objectKey));
    // the CSV has no timestamps: the same bytes
    expect(again.artifacts[1]!.sha256).toBe(built.artifacts[1]!.sha256);
    const { csv } = await readArtifacts(again);
    expect(csv).toHaveLength(7);
  }, 60_000);
});

// ---------------------------------------------------------------------------------------------------
// Integration sync report: one QuickBooks connection of organization S synced three times through the
// API — completed, then refused (401: failed), then cancelled while it pages — and a pending connection
// of another organization that must not appear.
// ---------------------------------------------------------------------------------------------------

describe('buildIntegrationSyncReport', () => {
  let org: Org;
  let other: Org;
  let connectionId: string;
  let t0: string;
  let t1: string;

  async function authenticatedQbo(o: Org, name: string): Promise<string> {
    const created = await stack.request('POST', '/v2/integrations/connections', { token: o.token, body: { provider_name: 'quickbooks_online', name } });
    expect(created.status).toBe(200);
    const state = new URL(created.body.authorization_url).searchParams.get('state');
    const auth = await stack.request('POST', `/v2/integrations/connections/${created.body.id}/authenticate`, {
      token: o.token,
      body: { provider_name: 'quickbooks_online', authorization_code: fake.authorizationCode, redirect_uri: REDIRECT_URI, state, extra_data: { realmId: fake.realmId } },
    });
    expect(auth.status, JSON.stringify(auth.body)).toBe(200);
    return created.body.id as string;
  }
  async function startSync(o: Org, id: string) {
    const res = await stack.request('POST', `/v2/integrations/connections/${id}/sync`, { token: o.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { batch_id: string; workflow_id: string };
  }
  async function runsOf(o: Org, id: string): Promise<any[]> {
    const res = await stack.request('GET', `/v2/integrations/connections/${id}/sync-runs?page_size=100`, { token: o.token });
    expect(res.status).toBe(200);
    return res.body.data;
  }

  beforeAll(async () => {
    org = await stack.onboard('Sync report S');
    other = await stack.onboard('Sync report other');
    t0 = new Date(Date.now() - 1000).toISOString();
    connectionId = await authenticatedQbo(org, 'QBO books');
    const first = await startSync(org, connectionId);
    await temporal.client.workflow.getHandle(first.workflow_id).result();
    t1 = new Date().toISOString();

    fake.forceStatus = 401;
    try {
      const second = await startSync(org, connectionId);
      await temporal.client.workflow.getHandle(second.workflow_id).result();
    } finally {
      fake.forceStatus = null;
    }

    fake.records.Customer[0]!.MetaData = { ...fake.records.Customer[0]!.MetaData, LastUpdatedTime: new Date().toISOString() };
    const block = fake.block('Customer', 1);
    const third = await startSync(org, connectionId);
    await block.reached;
    const db = createDb({ url: stack.databaseUrl, schema: 'integrations', poolMax: 1 });
    try {
      await cancelRunningSyncs({ db, temporal: temporal.client }, org.organizationId, connectionId);
    } finally {
      await db.destroy();
    }
    block.release();
    await temporal.client.workflow.getHandle(third.workflow_id).result().catch(() => {});
    for (let i = 0; i < 100; i++) {
      const runs = await runsOf(org, connectionId);
      if (runs.filter((r) => r.status === 'cancelled').length === 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const pending = await stack.request('POST', '/v2/integrations/connections', { token: other.token, body: { provider_name: 'quickbooks_online', name: 'Other books' } });
    expect(pending.status).toBe(200);
  }, 180_000);

  it('counts each model’s runs of the period by outcome, with the records synced, the last successful sync and the errors', async () => {
    const runs = await runsOf(org, connectionId);
    expect(runs.map((r) => r.status).sort()).toEqual(['cancelled', 'cancelled', 'cancelled', 'completed', 'completed', 'completed', 'failed', 'failed', 'failed']);
    const periodEnd = new Date(Date.now() + 1000).toISOString();
    const built = await build('buildIntegrationSyncReport', input(org, { periodStart: t0, periodEnd }));
    expect(built.title).toBe('Integration sync report as of 2026-12-31');
    expect(built.rowCount).toBe(3);
    const records = runs.reduce((s, r) => s + r.records_synced, 0);
    expect(records).toBeGreaterThanOrEqual(250);
    expect(built.counts).toEqual({ connections: 1, unhealthy_connections: 1, completed_runs: 3, failed_runs: 3, cancelled_runs: 3, records_synced: records });

    const { wb, csv } = await readArtifacts(built);
    expect(csv[0]).toEqual(['Connection', 'Provider', 'Health', 'Health message', 'Sync disabled', 'Model', 'Last successful sync (UTC)', 'Completed runs', 'Failed runs', 'Cancelled runs', 'Runs in progress', 'Records synced', 'Errors']);
    const byModel = new Map(csv.slice(1).map((r) => [r[5], r]));
    expect([...byModel.keys()].sort()).toEqual(['credit_memos', 'customers', 'invoices']);
    for (const [model, row] of byModel) {
      const own = runs.filter((r) => r.model_name === model);
      const completed = own.find((r) => r.status === 'completed');
      const failed = own.find((r) => r.status === 'failed');
      expect(row.slice(0, 3)).toEqual(['QBO books', 'quickbooks_online', 'authentication_required']);
      expect(row[6]).toBe(completed.completed_at);
      expect(row.slice(7, 12)).toEqual(['1', '1', '1', '0', String(own.reduce((s, r) => s + r.records_synced, 0))]);
      expect(row[12]).toBe(failed.error);
      expect(row[12]).toMatch(/^AuthenticationRequired: QuickBooks Online refused the access token \(401\)/);
    }
    const xlsx = sheetRows(wb, 'Integration sync');
    expect(xlsx).toHaveLength(4);
    expect(xlsx.slice(1).map((r) => r.slice(7, 10))).toEqual([[1, 1, 1], [1, 1, 1], [1, 1, 1]]);
    expect(built.summaryRows[0]).toEqual({ label: 'QBO books', values: ['quickbooks_online', 'authentication_required', '3', '3', '3', String(records), expect.stringMatching(/Z$/)] });
    expect(built.summaryRows.at(-1)!.label).toBe('All connections');
  }, 60_000);

  it('counts only the runs created in the period; the last successful sync is the latest ever', async () => {
    const built = await build('buildIntegrationSyncReport', input(org, { periodStart: t1, periodEnd: new Date(Date.now() + 1000).toISOString() }));
    expect(built.counts).toMatchObject({ completed_runs: 0, failed_runs: 3, cancelled_runs: 3 });
    const { csv } = await readArtifacts(built);
    const runs = await runsOf(org, connectionId);
    for (const row of csv.slice(1)) {
      expect(row.slice(7, 10)).toEqual(['0', '1', '1']);
      expect(row[6]).toBe(runs.find((r) => r.model_name === row[5] && r.status === 'completed').completed_at);
    }
    const before = await build('buildIntegrationSyncReport', input(org, { periodStart: '2020-01-01T00:00:00Z', periodEnd: t0 }));
    expect(before.counts).toMatchObject({ completed_runs: 0, failed_runs: 0, cancelled_runs: 0, records_synced: 0 });
  }, 60_000);

  it("keeps organizations apart: each report has only its organization's connections", async () => {
    const built = await build('buildIntegrationSyncReport', input(other, { periodStart: t0, periodEnd: new Date(Date.now() + 1000).toISOString() }));
    expect(built.counts).toMatchObject({ connections: 1, completed_runs: 0, failed_runs: 0, cancelled_runs: 0 });
    const { csv } = await readArtifacts(built);
    expect(csv.slice(1).map((r) => [r[0], r[2], r[5], r[7], r[8], r[9]])).toEqual(
      ['credit_memos', 'customers', 'invoices'].map((m) => ['Other books', 'authentication_required', m, '0', '0', '0']),
    );
    expect(csv.flat().join('|')).not.toContain('QBO books');
  }, 60_000);

  it('removes network addresses from the user-facing texts', () => {
    expect(withoutAddresses('connect ECONNREFUSED 10.0.3.7:5432 while calling http://erp.internal:8080/api?x=1')).toBe('connect ECONNREFUSED [address] while calling [address]');
    expect(withoutAddresses('host db.svc.cluster.local:5432 and [fd00::1]:443 and fe80::1:2:3')).toBe('host [address] and [address] and [address]');
    expect(withoutAddresses('AuthenticationRequired: QuickBooks Online refused the access token (401)')).toBe('AuthenticationRequired: QuickBooks Online refused the access token (401)');
    expect(withoutAddresses('failed at 12:30:45 on page 3 (2001:db8:0:0:0:0:2:1)')).toBe('failed at 12:30:45 on page 3 ([address])');
  });
});

describe('report cells', () => {
  it('neutralises text that a spreadsheet would evaluate, and only that', () => {
    for (const t of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1', '\n=1']) expect(neutralizeFormula(t)).toBe(`'${t}`);
    for (const t of ['Alpha', ' =1', "'quoted", '1-2', '']) expect(neutralizeFormula(t)).toBe(t);
  });
  it('formats integer minor units as exact decimal literals', () => {
    expect([0, 5, -5, 100, -5000, 123456789].map((c) => formatMinorUnits(c))).toEqual(['0.00', '0.05', '-0.05', '1.00', '-50.00', '1234567.89']);
    expect(formatMinorUnits(12345678901234567890n)).toBe('123456789012345678.90');
  });
});

describe('report files on their threads (kernel writeReportFiles)', () => {
  const columns = [
    { header: 'Name', kind: 'text' as const },
    { header: 'Amount', kind: 'amount' as const },
  ];
  /** Rows read in the calling thread, counting how far the reader got. */
  function* rowsOf(n: number, seen: { rows: number }) {
    for (let i = 0; i < n; i++) {
      seen.rows++;
      yield [`Customer ${i}`, i * 100 + 5];
    }
  }

  it('a full pool refuses a build with 503 and Retry-After before reading a row or writing an object', async () => {
    const pool = createReportFilesPool({ threads: 1, maxQueue: 0 });
    try {
      const prefix = `pool-test/${randomBytes(6).toString('hex')}`;
      const first = { rows: 0 };
      const refusedRows = { rows: 0 };
      const running = writeReportFiles({ storage, pool, objectPrefix: `${prefix}/a`, baseName: 'big', sheets: [{ name: 'Rows', columns, rows: rowsOf(20_000, first) }] });
      while (pool.pending === 0) await new Promise((r) => setTimeout(r, 5)); // the first build holds the one thread
      const refused = await writeReportFiles({ storage, pool, objectPrefix: `${prefix}/b`, baseName: 'refused', sheets: [{ name: 'Rows', columns, rows: rowsOf(10, refusedRows) }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(WorkerPoolBusyError);
      expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
      expect(refusedRows.rows).toBe(0);
      const written = await running;
      expect(written.rowCounts).toEqual([20_000]);
      expect(first.rows).toBe(20_000);
      expect(await storage.getObjectBytes(`${prefix}/b/refused.xlsx`)).toBeNull();
      expect(await storage.getObjectBytes(`${prefix}/b/refused.csv`)).toBeNull();
      const csv = parse(Buffer.from((await storage.getObjectBytes(`${prefix}/a/big.csv`))!)) as string[][];
      expect(csv).toHaveLength(20_001);
      expect(csv[20_000]).toEqual(['Customer 19999', '19999.05']);
    } finally {
      await pool.close();
    }
  });

  it("brings the writer's errors back (a row of the wrong width) and stops the thread when reading the rows fails", async () => {
    const pool = createReportFilesPool({ threads: 1, maxQueue: 0 });
    try {
      const prefix = `pool-test/${randomBytes(6).toString('hex')}`;
      const wide = await writeReportFiles({ storage, pool, objectPrefix: prefix, baseName: 'wide', sheets: [{ name: 'Rows', columns, rows: [['a', 1, 'extra']] }] }).catch((e: unknown) => e);
      expect(wide).toBeInstanceOf(RangeError);
      expect((wide as Error).message).toMatch(/a row of 3 cells for 2 columns/);
      async function* failing() {
        yield ['a', 1];
        throw new Error('the ledger read failed');
      }
      await expect(writeReportFiles({ storage, pool, objectPrefix: prefix, baseName: 'failing', sheets: [{ name: 'Rows', columns, rows: failing() }] })).rejects.toThrow('the ledger read failed');
      expect(pool.pending).toBe(0);
      // the thread is free again: the next build runs
      const ok = await writeReportFiles({ storage, pool, objectPrefix: prefix, baseName: 'ok', sheets: [{ name: 'Rows', columns, rows: [['=1+1', -250]] }] });
      expect(ok.rowCounts).toEqual([1]);
      expect(await storage.getObjectBytes(`${prefix}/wide.csv`)).toBeNull();
      expect(parse(Buffer.from((await storage.getObjectBytes(`${prefix}/ok.csv`))!))).toEqual([['Name', 'Amount'], ["'=1+1", '-2.50']]);
    } finally {
      await pool.close();
    }
  });
});
