/**
 * The admin worker killed (kill -9) while a collection run's emails go out: the run completes on the
 * restarted worker, every customer of the scenario gets one email (one Message-ID; a copy with the
 * same Message-ID is the documented SMTP window and is counted), and every (invoice, step) is in
 * exactly one sent action. The scenario's customers are its own (pushed like the middleware does),
 * chased by a policy of a segment that matches only them; the policy is removed at the end so no
 * later scenario or daily Schedule chases anybody.
 */
import { chunk, customerRecord, invoiceRecord } from '../api.js';
import { P, runId, type Scenario, suite } from '../context.js';
import { sleep, waitFor } from '../wait.js';

export async function workerCollections(sc: Scenario) {
  const { stack, api, org } = suite;
  const n = P.collectionCustomers;
  const tag = `chase${runId}`;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  const due = new Date(Date.parse(`${today}T00:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
  const codes = Array.from({ length: n }, (_, i) => `${tag}-${i}`);
  const addresses = codes.map((c) => `ap.${c}@chaos.example`);
  for (const [b, slice] of chunk(codes, 100).entries()) {
    const c = await api.call('POST', '/v2/integrations/providers/middleware/customers', { token: org.apiKey, body: slice.map((code, j) => customerRecord(code, `Chased ${tag} ${code}`, addresses[b * 100 + j]!)) });
    const inv = await api.call('POST', '/v2/integrations/providers/middleware/invoices', {
      token: org.apiKey,
      body: slice.map((code, j) => ({ ...invoiceRecord(String(70_000_000 + b * 100 + j), code, '500.00'), net_due_date: due, document_date: due, posting_date: due })),
    });
    const ok = (r: typeof c) => r.status === 200 && (r.body.results as { success: boolean }[]).every((x) => x.success);
    if (!ok(c) || !ok(inv)) throw new Error(`set-up push: ${c.status}/${inv.status} ${JSON.stringify(inv.body).slice(0, 300)}`);
  }
  const folder = await api.call('POST', '/v1/email-template-folders', { token: org.token, body: { name: `Chaos dunning ${tag}` } });
  const tpl = await api.call('POST', '/v1/email-templates', { token: org.token, body: { folder_id: folder.body.id, name: 'Reminder', subject: 'Overdue: {{ action.invoices.size }}', body: 'Dear {{ customer.name }}' } });
  const seg = await api.call('POST', '/v2/customer-segments', { token: org.token, body: { name: `Chaos ${tag}`, priority: 900_000 + Math.floor(Math.random() * 99_999), conditions: { field: 'name', op: 'contains', value: tag } } });
  const pol = await api.call('POST', '/v2/collection-policies', { token: org.token, body: { name: `Chaos ${tag}`, segment_id: seg.body.id, is_enabled: true, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl.body.id }] } });
  sc.check('template, segment and policy created (200)', [folder, tpl, seg, pol].every((r) => r.status === 200), [folder, tpl, seg, pol].map((r) => r.status).join(','));

  const started = await api.call('POST', '/v2/collections/runs', { token: org.token, body: {} });
  sc.check('the run started (202)', started.status === 202, String(started.status));
  const t0 = Date.now();
  await waitFor('the first collection email', 60_000, async () => [...(await api.mailCounts(addresses)).values()].some((c) => c > 0) || Date.now() - t0 > 5000, 50);
  sc.facts.sent_before_kill = [...(await api.mailCounts(addresses)).values()].filter((c) => c > 0).length;
  const k = stack.kill9('admin-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let run: { status: string; planned: number; sent: number; failed: number } | null = null;
  try {
    run = await waitFor('the run to end', P.jobMs, async () => {
      const r = await api.call('GET', `/v2/collections/runs/${started.body.id}`, { token: org.token });
      return r.body?.status && r.body.status !== 'running' ? r.body : null;
    }, 500);
    sc.recovery.kill_to_workflow_complete = Date.now() - k.at;
  } catch (err) {
    sc.check('the run ended', false, (err as Error).message);
  }
  sc.check(`the run completed with ${n} actions sent`, run?.status === 'completed' && run.sent === n && run.failed === 0, JSON.stringify(run));
  await sleep(3000); // a late duplicate would show up here
  const idsAt = new Map(addresses.map((a) => [a.toLowerCase(), [] as string[]]));
  for (const m of await api.mailsFor(addresses)) {
    const id = (await api.mailHeaders(m.id))['message-id'] ?? `(none: ${m.id})`;
    for (const a of m.to) idsAt.get(a)?.push(id);
  }
  const wrong = [...idsAt].filter(([, ids]) => new Set(ids).size !== 1);
  sc.check(`one email (one Message-ID) per customer (${n})`, wrong.length === 0, wrong.length ? JSON.stringify(wrong.slice(0, 5)) : undefined);
  sc.facts.same_message_id_copies = [...idsAt.values()].reduce((c, ids) => c + ids.length - new Set(ids).size, 0);
  const invoiceIds: string[] = [];
  for (let page = 0; ; page++) {
    const r = await api.call('GET', `/v2/collections/actions?run_id=${started.body.id}&page=${page}&page_size=500`, { token: org.token });
    invoiceIds.push(...(r.body.data as { invoice_ids: string[] }[]).flatMap((a) => a.invoice_ids));
    if (r.body.next_page === null) break;
  }
  sc.check(`every invoice in exactly one action (${n})`, invoiceIds.length === n && new Set(invoiceIds).size === n, `${invoiceIds.length} ids, ${new Set(invoiceIds).size} distinct`);
  const removed = await api.call('DELETE', `/v2/collection-policies/${pol.body.id}`, { token: org.token });
  sc.check('the scenario\'s policy removed (204)', removed.status === 204, String(removed.status));
}
