/**
 * What recording the invoice events costs a middleware push, in one run: 1,000 invoices (one line
 * item each) in 10 batches of 100, one batch after the other, written
 *   (old) as the push wrote them before events: the one set-based upsert per batch (`upsertDocuments`);
 *   (new) as the push writes them now: the batch's rows read and locked, the same upsert, the rows
 *         read again and one multi-row insert of their events, in one transaction per batch
 *         (`writeDocumentsRecordingEvents`).
 * Three shapes: fresh inserts (1,000 invoice.created), an identical re-push (no event), and a re-push
 * with every invoice changed (1,000 invoice.updated). Old and new alternate over ROUNDS rounds on their
 * own organizations and keys; the report gives each round and the medians. Results:
 * bench/results/push-events.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { connectTemporal, createDb } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { startBenchEnvironment } from './support/environment.js';
import { serveInChild } from './support/process.js';
import { invoiceRecord } from '../test/support/ledger.js';
import { validateInvoice, type ValidInvoice } from '../services/integrations/src/domain/push.js';
import { upsertDocuments } from '../services/integrations/src/store/ledger.js';
import { writeDocumentsRecordingEvents } from '../services/integrations/src/domain/ledger-events.js';

const RECORDS = 1_000;
const BATCH = 100;
const ROUNDS = Number(process.env.PUSH_EVENTS_ROUNDS ?? 5);

function batchesOf(prefix: string, text: string): ValidInvoice[][] {
  const rows = Array.from({ length: RECORDS }, (_, i) => {
    const amount = (10_000 + ((i * 7919) % 100_000)) / 100; // exactly two decimals in its shortest form
    const o = validateInvoice(invoiceRecord({ document_number: `${prefix}${String(i).padStart(6, '0')}`, customer_code: `C-${i % 50}`, amount_in_document_currency: amount, amount_in_local_currency: amount, text, line_items: [{ line_number: 1, description: 'Widgets', quantity: 1, unit_amount: amount, total_amount: amount }] }), 2);
    if (!o.ok) throw new Error(o.message);
    return o.row;
  });
  const out: ValidInvoice[][] = [];
  for (let i = 0; i < rows.length; i += BATCH) out.push(rows.slice(i, i + BATCH));
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  const env = await startBenchEnvironment('push-events');
  const stops: Array<() => Promise<void>> = [env.stop];
  try {
    const admin = await serveInChild('admin-api', env.env); // migrates the admin schema
    stops.unshift(admin.stop);
    const integrations = await serveInChild('integrations-api', env.env); // migrates the integrations schema
    stops.unshift(integrations.stop);
    const temporal = await connectTemporal({ address: env.env.TEMPORAL_ADDRESS!, namespace: env.env.TEMPORAL_NAMESPACE! });
    const adminDb = createDb({ url: env.env.DATABASE_URL!, schema: 'admin', poolMax: 1 });
    const onboard = async (name: string) =>
      (await onboardOrganization({ db: adminDb, temporal: temporal.client }, { name, base_currency: 'EUR', timezone: 'UTC', admin: { email: `${name.toLowerCase()}@example.com`, name } })).organization.id;
    const orgs = { old: await onboard('Old'), new: await onboard('New') };
    await adminDb.destroy();
    await temporal.close();

    const db = createDb({ url: env.env.DATABASE_URL!, schema: 'integrations', poolMax: 2 });
    const write = {
      old: (org: string, rows: ValidInvoice[]) => upsertDocuments(db, org, 'middleware', rows),
      new: (org: string, rows: ValidInvoice[]) => db.transaction((trx) => writeDocumentsRecordingEvents(trx, org, 'middleware', rows)),
    };
    const timed = async (which: 'old' | 'new', batches: ValidInvoice[][]) => {
      const started = process.hrtime.bigint();
      for (const b of batches) await write[which](orgs[which], b);
      return Number((Number(process.hrtime.bigint() - started) / 1e6).toFixed(1));
    };
    // Warm-up: connections, prepared statements, JIT.
    for (const which of ['old', 'new'] as const) await timed(which, batchesOf(`W${which}`, 'warm'));

    const shapes = ['insert', 'identical_repush', 'changed_repush'] as const;
    const ms: Record<'old' | 'new', Record<(typeof shapes)[number], number[]>> = {
      old: { insert: [], identical_repush: [], changed_repush: [] },
      new: { insert: [], identical_repush: [], changed_repush: [] },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const which of round % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)) {
        const prefix = `R${round}${which}`;
        ms[which].insert.push(await timed(which, batchesOf(prefix, 'Goods delivered')));
        ms[which].identical_repush.push(await timed(which, batchesOf(prefix, 'Goods delivered')));
        ms[which].changed_repush.push(await timed(which, batchesOf(prefix, 'Goods delivered late')));
      }
    }
    const events = await db.raw<{ rows: { type: string; n: string }[] }>(`SELECT type, count(*) AS n FROM events WHERE organization_id = ? GROUP BY type ORDER BY type`, [orgs.new]);
    await db.destroy();

    const medians = Object.fromEntries(
      (['old', 'new'] as const).map((w) => [w, Object.fromEntries(shapes.map((s) => [s, Number(median(ms[w][s]).toFixed(1))]))]),
    ) as Record<'old' | 'new', Record<(typeof shapes)[number], number>>;
    const report = {
      benchmark: 'push-events',
      records: RECORDS,
      batch_size: BATCH,
      rounds: ROUNDS,
      machine: { cpus: os.cpus().length, node: process.version, load_average_1m: Number(os.loadavg()[0]!.toFixed(2)) },
      milliseconds_per_1000_records: { median: medians, rounds: ms },
      overhead_ratio: Object.fromEntries(shapes.map((s) => [s, Number((medians.new[s] / medians.old[s]).toFixed(2))])),
      // the new path's events (warm-up included): ROUNDS × 1,000 created and updated, none for identical re-pushes
      events_recorded: Object.fromEntries(events.rows.map((r) => [r.type, Number(r.n)])),
    };
    mkdirSync('bench/results', { recursive: true });
    writeFileSync('bench/results/push-events.json', JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report.milliseconds_per_1000_records.median)}\n${JSON.stringify(report.overhead_ratio)} ${JSON.stringify(report.events_recorded)}\nwritten bench/results/push-events.json\n`);
  } finally {
    for (const stop of stops) await stop().catch(() => {});
  }
}
