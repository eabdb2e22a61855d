/** The cash-app worker killed (kill -9) while a statement is stored, and (full profile) again while it is matched. */
import { CI, P, RUNNING, type Scenario, suite } from '../context.js';
import { takeInvoices } from '../ledger.js';
import { checkStatement, statementOf, uploadStatement } from '../statements.js';
import { waitFor } from '../wait.js';

export async function workerStatement(sc: Scenario) {
  const { stack } = suite;
  const lines = takeInvoices(P.statementLines);
  const res = await uploadStatement('kill-cash', lines);
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  const id = res.body.id as string;
  sc.facts.statement_lines = lines.length;
  const t0 = Date.now();
  // kill while the statement is being stored (the first lines are in, or at the latest 1.5 s after the upload)
  await waitFor('the statement to start processing', 60_000, async () => {
    const s = await statementOf(id);
    return !RUNNING.includes(s.body?.status) || s.body.transaction_count > 0 || Date.now() - t0 > 1500;
  }, 100);
  const before = (await statementOf(id)).body;
  sc.facts.at_first_kill = { status: before.status, transaction_count: before.transaction_count };
  sc.check('the kill hit a running workflow', RUNNING.includes(before.status), `status ${before.status}, ${before.transaction_count} lines stored at the kill`);
  const k = stack.kill9('cash-app-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  if (!CI) {
    // a second kill during matching (every line stored, proposals being made)
    const mid = await waitFor('the statement to reach the matching step', 120_000, async () => {
      const s = (await statementOf(id)).body;
      return !RUNNING.includes(s.status) || s.transaction_count === lines.length ? s : null;
    }, 200);
    if (RUNNING.includes(mid.status)) {
      sc.facts.at_second_kill = { status: mid.status, transaction_count: mid.transaction_count };
      const k2 = stack.kill9('cash-app-worker');
      sc.recovery.second_kill_to_worker_ready = await k2.ready(P.backMs);
    } else sc.facts.second_kill = `skipped: the statement was already ${mid.status}`;
  }
  const doneAt = await checkStatement(sc, id, lines.length, P.jobMs);
  sc.recovery.kill_to_workflow_complete = doneAt - k.at;
  sc.facts.statement_id = id;
}
