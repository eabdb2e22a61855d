/**
 * The admin worker killed (kill -9) while user invitations are emailed and a CNAM registration is
 * submitted: one invitation each with a working token; the operator CLI's decision approves it once.
 */
import { execFile } from 'node:child_process';
import { connectTemporal } from '@rp/platform';
import { cnamRegistrationWorkflowId } from '@rp/workflows';
import { type Body, sql } from '../api.js';
import { log, P, root, runId, type Scenario, suite } from '../context.js';
import { sleep, waitFor } from '../wait.js';

/** A complete US caller-ID registration (spec 2.18): the fields `submit: true` requires. */
const CNAM = {
  display_name: 'Chaos Collect',
  legal_business_name: 'Chaos Receivables, Inc.',
  street_address: '1 Market Street',
  city: 'San Francisco',
  state: 'CA',
  postal_code: '94105',
  country: 'US',
  business_type: 'corporation',
  business_industry: 'financial services',
  registration_id_type: 'EIN',
  registration_number: '12-3456789',
  regions_of_operation: ['US-CA'],
  website: 'https://chaos.example/about',
  contact_first_name: 'Ada',
  contact_last_name: 'Admin',
  contact_email: 'ada@chaos.example',
  contact_phone: '+12015550123',
  contact_title: 'Controller',
  phone_number: '+14155552671',
  submit: true,
};

/** The operator's CLI as a process (`npm run cli -- …`); with the suite's data directory it needs the stack's connection settings. */
async function operatorCli(args: string[]): Promise<{ code: number; out: Body; err: string }> {
  const { stack } = suite;
  const env = stack.localEnv!;
  return new Promise((resolve) => {
    execFile(process.execPath, ['scripts/bootstrap.mjs', 'cli', '--quiet-bootstrap', ...args], {
      cwd: root,
      timeout: 60_000,
      env: { ...process.env, DATABASE_URL: env.DATABASE_URL, TEMPORAL_ADDRESS: env.TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE: env.TEMPORAL_NAMESPACE },
    }, (err, stdout, stderr) => {
      let out: Body = null;
      try {
        out = JSON.parse(stdout);
      } catch {
        // not JSON (a failure)
      }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out, err: stderr.trim().split('\n').pop() ?? '' });
    });
  });
}

export async function workerInvites(sc: Scenario) {
  const { stack, api, org } = suite;
  const emails = Array.from({ length: P.invites }, (_, i) => `invitee.${i + 1}.${runId}@chaos.example`);
  const created = await Promise.all(emails.map((email) => api.call('POST', '/v1/user-invites', { token: org.token, body: { email, role: 'member' } })));
  sc.check(`every invite created (200, ${emails.length})`, created.every((r) => r.status === 200 && r.body?.object === 'user_invite'), created.map((r) => r.status).join(','));
  const submitted = await api.call('PUT', '/v2/cnam-registration', { token: org.token, body: CNAM });
  sc.check('the CNAM registration is submitted (200, submitted)', submitted.status === 200 && submitted.body?.status === 'submitted', `${submitted.status} ${submitted.body?.status ?? JSON.stringify(submitted.body)}`);
  const t0 = Date.now();
  await waitFor('the first invitation email', 30_000, async () => [...(await api.mailCounts(emails)).values()].some((n) => n > 0) || Date.now() - t0 > 2000, 50);
  sc.facts.invitations_sent_before_kill = [...(await api.mailCounts(emails)).values()].filter((n) => n > 0).length;
  sc.facts.cnam_status_at_kill = (await api.call('GET', '/v2/cnam-registration', { token: org.token })).body?.status;
  const k = stack.kill9('admin-worker');
  sc.recovery.kill_to_worker_ready = await k.ready(P.backMs);
  let allAt: number | null = null;
  try {
    await waitFor(`an invitation email at each of ${emails.length} addresses`, P.jobMs, async () => [...(await api.mailCounts(emails)).values()].every((n) => n >= 1), 500);
    allAt = Date.now();
  } catch (err) {
    sc.check('every invitation email sent', false, (err as Error).message);
  }
  let inReviewAt: number | null = null;
  try {
    await waitFor('the CNAM registration in review', P.jobMs, async () => (await api.call('GET', '/v2/cnam-registration', { token: org.token })).body?.status === 'in_review', 500);
    inReviewAt = Date.now();
  } catch (err) {
    sc.check('the CNAM submission reaches in_review', false, (err as Error).message);
  }
  await sleep(3000);

  const mails = await api.mailsFor(emails);
  const counts = await api.mailCounts(emails);
  const wrong = [...counts].filter(([, n]) => n !== 1);
  sc.check(`exactly one invitation email per invite (${emails.length})`, wrong.length === 0 && mails.every((m) => m.to.length === 1), wrong.length ? JSON.stringify(wrong) : undefined);
  if (wrong.length) {
    // what a duplicate is: a resend of the same message (same Message-ID and token) or a second message
    sc.facts.duplicates = await Promise.all(wrong.map(async ([address]) => {
      const copies = await Promise.all(mails.filter((m) => m.to.includes(address)).map(async (m) => {
        const head = await api.mailHeaders(m.id);
        return { message_id: head['message-id'], date: head.date, token: /rpi_[A-Za-z0-9_-]{43}/.exec(m.text)?.[0]?.slice(0, 10) };
      }));
      const [row] = await sql(stack.localEnv!.DATABASE_URL, `SELECT e.status, e.attempts FROM admin.outbound_emails e JOIN admin.user_invites i ON e.idempotency_key = 'user-invite-' || i.id
          WHERE i.organization_id = $1 AND lower(i.email) = $2`, [org.id, address]);
      return { address, copies, outbound_email: row };
    }));
    log(`  duplicates: ${JSON.stringify(sc.facts.duplicates)}`);
  }
  sc.check('each is the invitation', mails.every((m) => m.subject === `You are invited to Chaos ${runId} on the Receivables Platform`), [...new Set(mails.map((m) => m.subject))].join(' | '));
  const tokens = new Map(mails.map((m) => [m.to[0], /rpi_[A-Za-z0-9_-]{43}/.exec(m.text)?.[0]]));
  const distinct = new Set([...tokens.values()].filter(Boolean));
  sc.check('each email carries a token of its own', distinct.size === emails.length, `${distinct.size} distinct tokens`);
  // the public accept route is rate-limited per client address: two accepts and one replay
  for (const email of [emails[0], emails[emails.length - 1]]) {
    const acc = await api.call('POST', '/v1/user-invites/accept', { body: { token: tokens.get(email), name: 'Chaos Invitee' } });
    sc.check(`the token mailed to ${email.split('@')[0]} is accepted (200, that user)`, acc.status === 200 && acc.body?.user?.email === email && /^rpu_/.test(acc.body?.access_token?.token ?? ''), `${acc.status} ${acc.body?.user?.email ?? JSON.stringify(acc.body)}`);
  }
  const replay = await api.call('POST', '/v1/user-invites/accept', { body: { token: tokens.get(emails[0]), name: 'Again' } });
  sc.check('a used token is refused (401)', replay.status === 401, String(replay.status));
  const [c] = await sql(stack.localEnv!.DATABASE_URL, `SELECT
      (SELECT count(*)::int FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2)) AS invites,
      (SELECT count(*)::int FROM admin.outbound_emails WHERE idempotency_key IN (SELECT 'user-invite-' || id FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2))) AS email_rows,
      (SELECT count(*)::int FROM admin.outbound_emails WHERE status = 'sent' AND idempotency_key IN (SELECT 'user-invite-' || id FROM admin.user_invites WHERE organization_id = $1 AND lower(email) = ANY($2))) AS sent_rows,
      (SELECT count(*)::int FROM admin.users WHERE organization_id = $1 AND lower(email) = ANY($2)) AS users`, [org.id, emails]);
  sc.check(`one invite row and one sent email row per invite, one user per accepted invite (SQL cross-check)`,
    c.invites === emails.length && c.email_rows === emails.length && c.sent_rows === emails.length && c.users === 2, JSON.stringify(c));

  const first = await operatorCli(['cnam', 'decide', '--org', org.id, '--approve', '--detail', 'Registered with the carrier']);
  sc.check('`npm run cli -- cnam decide --approve` approves it', first.code === 0 && first.out?.status === 'approved', first.code === 0 ? first.out?.status : `exit ${first.code}: ${first.err}`);
  const second = await operatorCli(['cnam', 'decide', '--org', org.id, '--approve']);
  sc.check('a second decision is refused (nothing in review)', second.code !== 0, second.code === 0 ? JSON.stringify(second.out) : second.err);
  const after = await api.call('GET', '/v2/cnam-registration', { token: org.token });
  sc.check('GET /v2/cnam-registration: approved, once', after.body?.status === 'approved' && after.body?.approved_at === first.out?.approved_at && after.body?.submission_id === submitted.body?.submission_id, `${after.body?.status} ${after.body?.approved_at}`);
  const t = await connectTemporal({ address: stack.localEnv!.TEMPORAL_ADDRESS, namespace: stack.localEnv!.TEMPORAL_NAMESPACE });
  try {
    const result = await t.client.workflow.getHandle(cnamRegistrationWorkflowId(submitted.body.submission_id)).result();
    sc.check('the cnam-registration workflow ends approved', (result as Body)?.status === 'approved', JSON.stringify(result));
  } finally {
    await t.close();
  }
  const [s] = await sql(stack.localEnv!.DATABASE_URL, `SELECT count(*)::int AS submissions, count(*) FILTER (WHERE status = 'approved')::int AS approved
      FROM admin.cnam_submissions WHERE organization_id = $1`, [org.id]);
  sc.check('one submission, approved once (SQL cross-check)', s.submissions === 1 && s.approved === 1, JSON.stringify(s));
  sc.recovery.kill_to_workflow_complete = allAt ? allAt - k.at : null;
  sc.recovery.kill_to_cnam_in_review = inReviewAt ? Math.max(0, inReviewAt - k.at) : null;
}
