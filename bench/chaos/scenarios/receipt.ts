/** The cash-app worker killed (kill -9) while payment receipts are emailed: one message (one Message-ID) each, every record sent. */
import { customerEmail, P, type Scenario, suite } from '../context.js';
import { takeInvoices } from '../ledger.js';
import { statementEnd, uploadStatement } from '../statements.js';
import { sleep, waitFor } from '../wait.js';

export async function workerReceipt(sc: Scenario) {
  const { stack, api, org } = suite;
  // approved payments of distinct customers (so each receipt goes to its own address), from a statement of their own
  const lines = takeInvoices(P.receipts); // consecutive invoices: distinct customers (R <= customers)
  const up = await uploadStatement('receipts', lines);
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body).slice(0, 300)}`);
  const st = await statementEnd(up.body.id, P.jobMs);
  if (st.status !== 'ready') throw new Error(`the receipts' statement ended ${st.status}`);
  const pays = await api.call('GET', `/v2/payments?statement_id=${up.body.id}&page_size=100`, { token: org.token });
  const ids = (pays.body.data as { id: string }[]).map((p) => p.id);
  if (ids.length !== lines.length) throw new Error(`expected ${lines.length} proposed payments, got ${ids.length}`);
  for (const id of ids) {
    const a = await api.call('POST', `/v2/payments/${id}/approve`, { token: org.token });
    if (a.status !== 200) throw new Error(`approve ${id}: ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
  }
  const addresses = lines.map((l) => customerEmail(l.customer));
  const requested = await Promise.all(ids.map((id) => api.call('POST', '/v2/cash-app/outreach/payment-receipt', { token: org.token, body: { payment_id: id } })));
  sc.check('every receipt request accepted (200)', requested.every((r) => r.status === 200), requested.map((r) => r.status).join(','));
  // kill when the first receipt is out (the rest are in flight), at the latest after 2 s
  const t0 = Date.now();
  await waitFor('the first receipt email', 30_000, async () => [...(await api.mailCounts(addresses)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.sent_before_kill = [...(await api.mailCounts(addresses)).values()].filter((n) => n > 0).length;
  const k = stack.kill9('cash-app-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`a receipt email at each of ${addresses.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(addresses)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every receipt sent', false, (err as Error).message);
  }
  await sleep(3000); // a late duplicate would show up here
  // One message per receipt: one Message-ID at each address. The kill lands right after the first
  // receipt is out, so it can fall between the SMTP server's acceptance of a receipt and the
  // sent-write a few milliseconds later; the retried attempt then sends a copy with the SAME
  // Message-ID (the deterministic id of the intent), which receivers collapse. That window is the
  // documented limit of plain SMTP (packages/platform/src/recorded-email.ts): reported as a fact, while
  // a second message (another Message-ID) or a missing one fails.
  const mails = await api.mailsFor(addresses);
  const idsAt = new Map(addresses.map((a) => [a.toLowerCase(), [] as string[]]));
  for (const m of mails) {
    const id = (await api.mailHeaders(m.id))['message-id'] ?? `(none: ${m.id})`;
    for (const a of m.to) idsAt.get(a)?.push(id);
  }
  const wrong = [...idsAt].filter(([, ids]) => new Set(ids).size !== 1).map(([a, ids]) => [a, ids]);
  sc.check(`one message (one Message-ID) per receipt (${addresses.length})`, wrong.length === 0, wrong.length ? JSON.stringify(wrong) : undefined);
  sc.facts.same_message_id_copies = [...idsAt.values()].reduce((n, ids) => n + ids.length - new Set(ids).size, 0);
  // the workflow ends by recording the receipt as sent (just after the SMTP server accepted it)
  const statusesNow = async () => (await Promise.all(requested.map((r) => api.call('GET', `/v2/cash-app/outreach/${r.body?.id}`, { token: org.token })))).map((r) => r.body?.status as string);
  let statuses: string[] = [];
  let sentAt: number | null = null;
  try {
    await waitFor('every outreach record to be sent', P.jobMs, async () => (statuses = await statusesNow()).every((s) => s === 'sent'), 500);
    sentAt = Date.now();
  } catch {
    // reported below
  }
  sc.check('every outreach record is sent', statuses.every((s) => s === 'sent'), statuses.join(','));
  sc.recovery.kill_to_emails_received = allAt ? allAt - k.at : null;
  sc.recovery.kill_to_workflow_complete = sentAt ? sentAt - k.at : null;
}
