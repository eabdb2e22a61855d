/**
 * The suite's organization and its ledger: onboarded through admin's own onboarding, customers and
 * open invoices pushed through the middleware endpoints, and the pool of open invoices the statement
 * scenarios pay from.
 */
import { connectTemporal, createDb } from '@rp/platform';
import { onboardOrganization } from '@rp/admin';
import { chunk, customerRecord, invoiceRecord, type LedgerInvoice } from './api.js';
import { customerEmail, customerName, P, runId, suite } from './context.js';

let invoices: LedgerInvoice[] = [];
/** Matching proposes each open invoice once, so every statement pays invoices of its own: slices of the pool. */
let poolNext = 0;
export const takeInvoices = (n: number) => invoices.slice(poolNext, (poolNext += n));
/** How many open invoices the ledger holds (0 until setUpLedger ran). */
export const ledgerInvoiceCount = () => invoices.length;
const OUTAGE_SCENARIOS = 4;
const poolSize = () => P.statementLines + P.receipts + OUTAGE_SCENARIOS * (P.outageLines + 20);

export async function onboard(): Promise<void> {
  const env = suite.stack.localEnv!;
  const t = await connectTemporal({ address: env.TEMPORAL_ADDRESS, namespace: env.TEMPORAL_NAMESPACE });
  const db = createDb({ url: env.DATABASE_URL, schema: 'admin', poolMax: 1 });
  try {
    const o = await onboardOrganization(
      { db, temporal: t.client },
      { name: `Chaos ${runId}`, base_currency: 'EUR', timezone: 'Europe/Berlin', admin: { email: `chaos.admin.${runId}@chaos.example`, name: 'Chaos Admin' } },
    );
    suite.org = { id: o.organization.id, token: o.accessToken.token, apiKey: o.apiKey.token };
  } finally {
    await db.destroy();
    await t.close();
  }
}

async function pushAll(kind: 'customers' | 'invoices', records: unknown[]): Promise<string[]> {
  const ids: string[] = [];
  for (const batch of chunk(records, 100)) {
    const res = await suite.api.call('POST', `/v2/integrations/providers/middleware/${kind}`, { token: suite.org.apiKey, body: batch });
    if (res.status !== 200 || !res.body.results.every((r: { success: boolean }) => r.success)) throw new Error(`set-up push of ${kind}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    ids.push(...res.body.results.map((r: { service_id: string }) => r.service_id));
  }
  return ids;
}

/** The org's ledger: `P.customers` customers with unique emails, `P.statementLines` open invoices. */
export async function setUpLedger(): Promise<void> {
  await pushAll('customers', Array.from({ length: P.customers }, (_, i) => customerRecord(`CH-${i + 1}`, customerName(i + 1), customerEmail(i + 1))));
  invoices = Array.from({ length: poolSize() }, (_, i) => ({
    number: String(80_000_000 + i + 1),
    amount: (100 + ((i * 37) % 9000) + ((i * 13) % 100) / 100).toFixed(2),
    customer: (i % P.customers) + 1,
  }));
  await pushAll('invoices', invoices.map((inv) => invoiceRecord(inv.number, `CH-${inv.customer}`, inv.amount)));
}
