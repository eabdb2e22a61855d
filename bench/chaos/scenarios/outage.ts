/**
 * PostgreSQL or Temporal stopped or frozen while a statement and a welcome email are in flight: 503
 * with Retry-After (never 500) meanwhile, every in-flight job completes afterwards, and an upload
 * refused during the outage succeeds when retried.
 */
import { P, runId, type Scenario, suite } from '../context.js';
import { takeInvoices } from '../ledger.js';
import { checkStatement, statementOf, uploadStatement } from '../statements.js';
import { sleep, waitFor } from '../wait.js';

/** "503 with Retry-After within a few seconds when a dependency is down". */
const ANSWER_WITHIN_MS = 10_000;

/** Poll reads during an outage; every answer must be 200 or 503 with Retry-After, never 500. */
function pollDuring(until: () => boolean, paths: string[]) {
  const { api, org } = suite;
  const seen: Record<string, number> = {};
  const bad: string[] = [];
  const slow: string[] = [];
  const run = (async () => {
    while (!until()) {
      for (const p of paths) {
        const r = await api.call('GET', p, { token: org.token, timeoutMs: 30_000 });
        const key = `GET ${p.split('?')[0]!.replace(/[0-9a-f-]{36}/, '{id}')} ${r.status}`;
        seen[key] = (seen[key] ?? 0) + 1;
        if (r.ms > ANSWER_WITHIN_MS) slow.push(`${key} after ${(r.ms / 1000).toFixed(1)} s`);
        if (!(r.status === 200 || (r.status === 503 && r.headers.get('retry-after')))) bad.push(`${key}${r.status === 503 ? ' without Retry-After' : ''} ${JSON.stringify(r.body ?? r.error).slice(0, 200)}`);
      }
      await sleep(500);
    }
  })();
  return { seen, bad, slow, run };
}

export async function outage(sc: Scenario, what: 'postgres' | 'temporal', mode: 'stop' | 'freeze') {
  const { stack, api, org } = suite;
  const lines = takeInvoices(P.outageLines);
  const refusedLines = takeInvoices(20);
  const tag = `${what}-${mode}`;
  const up = await uploadStatement(`${tag}-a`, lines);
  if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body).slice(0, 300)}`);
  const email = `outage.${tag}.${runId}@chaos.example`;
  const user = await api.call('POST', '/v2/users', { token: org.token, body: { email, name: `Outage ${what}` } });
  if (user.status !== 200) throw new Error(`user: ${user.status}`);
  await sleep(300); // processing has started
  const before = (await statementOf(up.body.id)).body;
  sc.facts.at_stop = { status: before.status, transaction_count: before.transaction_count };
  let over = false;
  const poll = pollDuring(() => over, ['/v2/business-units', `/v2/bank-statements/${up.body.id}?transactions=omit`]);
  let refused: { status: number; ms: number; retryAfter: string | null; type?: string; detail?: string } | null = null;
  const o = await stack.outage(what, mode, P.outageMs, async () => {
    if (mode === 'freeze') await sleep(1000);
    // a request that starts a workflow, during the outage
    const r = await uploadStatement(`${tag}-b`, refusedLines, 60_000);
    refused = { status: r.status, ms: Math.round(r.ms), retryAfter: r.headers.get('retry-after'), type: r.body?.type, detail: r.body?.detail ?? r.error };
  });
  over = true;
  await poll.run;
  sc.facts.outage_ms = o.downMs;
  sc.facts.restarted_by = o.restartedBy;
  sc.facts.answers_during_outage = poll.seen;
  sc.facts.upload_during_outage = refused;
  sc.check('503 with Retry-After (or 200) meanwhile, never 500', poll.bad.length === 0, poll.bad.slice(0, 3).join(' | ') || JSON.stringify(poll.seen));
  sc.check(`every answer within ${ANSWER_WITHIN_MS / 1000} s meanwhile (no hanging request)`, poll.slow.length === 0, poll.slow.slice(0, 3).join(' | ') || undefined);
  const r = refused as { status: number; ms: number; retryAfter: string | null } | null;
  sc.check(`an upload during the outage answers 503 with Retry-After (or is accepted) within ${ANSWER_WITHIN_MS / 1000} s`, !!r && ((r.status === 503 && !!r.retryAfter) || r.status === 200) && r.ms <= ANSWER_WITHIN_MS, JSON.stringify(r));
  const end = o.backAt;
  // from the end of the outage until the gateway's /readyz is green again (watched while the jobs finish)
  const gatewayReady = waitFor('gateway /readyz 200 after the outage', P.backMs, async () => (await stack.readyz()) === 200, 250).then(() => Date.now() - end, () => null);
  // in-flight jobs complete without a manual step
  const doneA = await checkStatement(sc, up.body.id, lines.length, P.jobMs);
  let mailAt: number | null = null;
  try {
    await waitFor(`the welcome email of ${email}`, P.jobMs, async () => (await api.mailTo(email)).length >= 1, 500);
    mailAt = Date.now();
  } catch (err) {
    sc.check('the welcome email started before the outage is sent', false, (err as Error).message);
  }
  await sleep(1000);
  sc.check('exactly one welcome email', (await api.mailTo(email)).length === 1, `${(await api.mailTo(email)).length} emails`);
  // the refused upload succeeds when the client retries it (nothing left that blocks it)
  if (r && r.status !== 200) {
    let retry = await uploadStatement(`${tag}-b`, refusedLines);
    for (let i = 0; i < 30 && (retry.status === 503 || retry.status === 502); i++) {
      await sleep(Number(retry.headers.get('retry-after') ?? 1) * 1000);
      retry = await uploadStatement(`${tag}-b`, refusedLines);
    }
    sc.check('the refused upload succeeds when retried (200, not 409)', retry.status === 200, `${retry.status} ${retry.status !== 200 ? JSON.stringify(retry.body).slice(0, 200) : ''}`);
    if (retry.status === 200) await checkStatement(sc, retry.body.id, 20, P.jobMs);
  }
  sc.recovery.outage_end_to_jobs_complete = Math.max(doneA, mailAt ?? doneA) - end;
  sc.recovery.outage_end_to_gateway_ready = await gatewayReady;
}
