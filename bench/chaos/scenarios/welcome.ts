/** The admin worker killed (kill -9) while welcome emails are sent: exactly one each. */
import { P, runId, type Scenario, suite } from '../context.js';
import { sleep, waitFor } from '../wait.js';

export async function workerWelcome(sc: Scenario) {
  const { stack, api, org } = suite;
  const emails = Array.from({ length: P.welcomes }, (_, i) => `new.user.${i + 1}.${runId}@chaos.example`);
  const created = await Promise.all(emails.map((email, i) => api.call('POST', '/v2/users', { token: org.token, body: { email, name: `Chaos User ${i + 1}` } })));
  sc.check('every user created (200)', created.every((r) => r.status === 200), created.map((r) => r.status).join(','));
  const t0 = Date.now();
  await waitFor('the first welcome email', 30_000, async () => [...(await api.mailCounts(emails)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.sent_before_kill = [...(await api.mailCounts(emails)).values()].filter((n) => n > 0).length;
  const k = stack.kill9('admin-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`a welcome email at each of ${emails.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(emails)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every welcome email sent', false, (err as Error).message);
  }
  await sleep(3000);
  const counts = await api.mailCounts(emails);
  const wrong = [...counts].filter(([, n]) => n !== 1);
  sc.check(`exactly one welcome email per user (${emails.length})`, wrong.length === 0, wrong.length ? JSON.stringify(wrong) : undefined);
  sc.recovery.kill_to_workflow_complete = allAt ? allAt - k.at : null;
}
