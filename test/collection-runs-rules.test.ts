/**
 * Collection runs: which policy applies, when a customer is skipped, who sends, exactly once under
 * simultaneous runs, tenants and business units — through the gateway, with the admin worker and a
 * real SMTP sink (MailDev). Disputes and promises to pay are made through their API. SQL set-up
 * stands for states no endpoint produces at once: a promise turned broken (its workflow breaks it
 * only after the promised date and grace days have passed) and runs of earlier days (this test's
 * runs moved one day back; a real run is always as of today).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { actionsOf, customer, emailTemplate, plusDays, policy, runCollections, todayIn, waitForRun } from './support/collections.js';

let stack: TestStack;
const today = () => todayIn('Europe/Berlin');

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
}, 180_000);
afterAll(async () => stack?.close());

const req = (token: string, method: string, path: string, body?: unknown) => stack.request(method, path, { token, body });

async function user(o: Org, name: string, role: 'admin' | 'member' = 'member', businessUnitIds: string[] = []) {
  const res = await req(o.token, 'POST', '/v2/users', { email: `${name.toLowerCase().replace(/\W+/g, '.')}.${Math.random().toString(36).slice(2, 8)}@example.com`, name, role, business_unit_ids: businessUnitIds });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { runCli } = await import('@rp/admin/cli');
  const t = (await runCli(['token', 'issue', '--org', o.organizationId, '--user', res.body.id], stack.env)) as { token: string };
  return { id: res.body.id as string, token: t.token };
}

async function segment(o: Org, priority: number, nameContains: string): Promise<string> {
  const res = await req(o.token, 'POST', '/v2/customer-segments', { name: `Seg ${priority} ${nameContains}`, priority, conditions: { field: 'name', op: 'contains', value: nameContains } });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

describe('policy resolution', () => {
  it('the highest-priority segment with an ENABLED policy applies, else the default policy, else none', async () => {
    const o = await stack.onboard('Resolution Org');
    const tpl = await emailTemplate(stack, o, 'R', 'R');
    const gold = await segment(o, 1, 'gold');
    const big = await segment(o, 2, 'big');
    const off = await segment(o, 3, 'off');
    const pGold = await policy(stack, o, { segmentId: gold, steps: [{ offset_days: 1, channel: 'email', email_template_id: tpl }] });
    const pBig = await policy(stack, o, { segmentId: big, steps: [{ offset_days: 2, channel: 'email', email_template_id: tpl }] });
    await policy(stack, o, { segmentId: off, enabled: false, steps: [{ offset_days: 3, channel: 'email', email_template_id: tpl }] });
    const due = plusDays(today(), -10);
    const goldBig = await customer(stack, o, { name: 'Big Gold Corp', invoices: [{ due }] });
    const bigOnly = await customer(stack, o, { name: 'Big Ltd', invoices: [{ due }] });
    const offOnly = await customer(stack, o, { name: 'Off Ltd', invoices: [{ due }] });

    // no default policy: a customer in no segment with an enabled policy is not chased
    let run = await runCollections(stack, o, { dry_run: true });
    let acts = await actionsOf(stack, o.token, `run_id=${run.id}`);
    expect(Object.fromEntries(acts.map((a) => [a.partner_id, a.policy_id]))).toEqual({ [goldBig.partnerId]: pGold, [bigOnly.partnerId]: pBig });

    const pDefault = await policy(stack, o, { segmentId: null, steps: [{ offset_days: 4, channel: 'email', email_template_id: tpl }] });
    run = await runCollections(stack, o, { dry_run: true });
    acts = await actionsOf(stack, o.token, `run_id=${run.id}`);
    expect(Object.fromEntries(acts.map((a) => [a.partner_id, a.policy_id]))).toEqual({ [goldBig.partnerId]: pGold, [bigOnly.partnerId]: pBig, [offOnly.partnerId]: pDefault });
    expect(await actionsOf(stack, o.token, `run_id=${run.id}&policy_id=${pBig}`)).toHaveLength(1);
  });
});

describe('skip reasons', () => {
  it('below_min_overdue, no_email_address, no_phone_number, all_invoices_on_hold; invoices on hold are left out of an action; skipped actions take no marks', async () => {
    const o = await stack.onboard('Skip Org');
    const tpl = await emailTemplate(stack, o, 'S', 'S');
    const smsTpl = await req(o.token, 'POST', '/v2/sms-templates', { name: 'Text', body: 'Hi {{ customer.name }}' });
    expect(smsTpl.status, smsTpl.text).toBe(200);
    const low = await segment(o, 1, 'small');
    const texting = await segment(o, 2, 'texting');
    await policy(stack, o, { segmentId: low, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl, min_overdue_lc: '500.00' }] });
    await policy(stack, o, { segmentId: texting, steps: [{ offset_days: 0, channel: 'sms', sms_template_id: smsTpl.body.id }] });
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });
    const due = plusDays(today(), -3);
    const small = await customer(stack, o, { name: 'Small Co', invoices: [{ due, amount: 499.99 }] });
    const enough = await customer(stack, o, { name: 'Small But Enough Co', invoices: [{ due, amount: 300 }, { due, amount: 200 }] });
    const noMail = await customer(stack, o, { name: 'Quiet Co', email: '', invoices: [{ due }] });
    const noPhone = await customer(stack, o, { name: 'Texting Co', phone: '12', invoices: [{ due }] });
    const held = await customer(stack, o, { name: 'Held Co', invoices: [{ due }, { due }] });
    const partly = await customer(stack, o, { name: 'Partly Co', invoices: [{ due }, { due }, { due }] });
    for (const [invoice_id, reason_code] of [[held.invoiceIds[0], 'pricing'], [partly.invoiceIds[0], 'quality']]) {
      const dispute = await req(o.token, 'POST', '/v2/disputes', { invoice_id, reason_code });
      expect(dispute.status, dispute.text).toBe(200);
    }
    const promise = await req(o.token, 'POST', '/v2/promises-to-pay', { partner_id: held.partnerId, invoice_ids: [held.invoiceIds[1]], amount: 100, promised_date: plusDays(today(), 5) });
    expect(promise.status, promise.text).toBe(200);

    const run = await runCollections(stack, o);
    expect(run).toMatchObject({ status: 'completed', skipped: 4, planned: 2, sent: 2 });
    const byPartner = Object.fromEntries((await actionsOf(stack, o.token, `run_id=${run.id}`)).map((a) => [a.partner_id, a]));
    expect(byPartner[small.partnerId]).toMatchObject({ status: 'skipped', skip_reason: 'below_min_overdue', sent_at: null });
    expect(byPartner[enough.partnerId]).toMatchObject({ status: 'sent', skip_reason: null });
    expect(byPartner[noMail.partnerId]).toMatchObject({ status: 'skipped', skip_reason: 'no_email_address' });
    expect(byPartner[noPhone.partnerId]).toMatchObject({ status: 'skipped', skip_reason: 'no_phone_number', channel: 'sms' });
    expect(byPartner[held.partnerId]).toMatchObject({ status: 'skipped', skip_reason: 'all_invoices_on_hold' });
    expect(byPartner[partly.partnerId]).toMatchObject({ status: 'sent' });
    expect([...byPartner[partly.partnerId].invoice_ids].sort()).toEqual(partly.invoiceIds.slice(1).sort());
    expect(await waitForMail(enough.email)).toHaveLength(1);
    const marks = await stack.sql('SELECT invoice_id FROM admin.collection_step_marks WHERE organization_id = $1', [o.organizationId]);
    expect(marks.map((m) => m.invoice_id).sort()).toEqual([...enough.invoiceIds, ...partly.invoiceIds.slice(1)].sort());
    const filtered = await actionsOf(stack, o.token, `run_id=${run.id}&status=skipped&channel=sms`);
    expect(filtered.map((a) => a.partner_id)).toEqual([noPhone.partnerId]);
  });
});

describe('holds', () => {
  it('an open promise to pay stops chasing; once it is broken chasing resumes at the step it was on, not at the latest due one', async () => {
    const o = await stack.onboard('Resume Org');
    const tpl = await emailTemplate(stack, o, 'Step {{ action.step.offset_days }}', 'Hello');
    await policy(stack, o, { segmentId: null, steps: [0, 7, 14].map((offset_days) => ({ offset_days, channel: 'email' as const, email_template_id: tpl })) });
    const c = await customer(stack, o, { invoices: [{ due: plusDays(today(), -20) }] });
    const dayPasses = () => stack.sql('UPDATE admin.collection_runs SET as_of_date = as_of_date - 1 WHERE organization_id = $1', [o.organizationId]);
    const only = async () => {
      const run = await runCollections(stack, o);
      const acts = await actionsOf(stack, o.token, `run_id=${run.id}`);
      expect(acts).toHaveLength(1);
      return acts[0];
    };
    expect(await only()).toMatchObject({ offset_days: 0, status: 'sent' });
    const made = await req(o.token, 'POST', '/v2/promises-to-pay', { partner_id: c.partnerId, invoice_ids: c.invoiceIds, amount: 1190, promised_date: plusDays(today(), 3) });
    expect(made.status, made.text).toBe(200);
    const promise = made.body as { id: string };
    await dayPasses();
    expect(await only()).toMatchObject({ offset_days: 7, status: 'skipped', skip_reason: 'all_invoices_on_hold' });
    await stack.sql(`UPDATE admin.promises_to_pay SET status = 'broken', resolved_at = now() WHERE id = $1`, [promise.id]);
    await dayPasses();
    expect(await only()).toMatchObject({ offset_days: 7, step_index: 1, status: 'sent' });
    const mails = await waitForMail(c.email, { count: 2 });
    expect(mails.map((m) => m.subject).sort()).toEqual(['Step 0', 'Step 7']);
  });
});

describe('sender', () => {
  it('the assignee sends; while the assignee is out of office the covering backup does; a customer without assignee gets the default sender (the earliest active admin)', async () => {
    const o = await stack.onboard('Sender Org');
    const tpl = await emailTemplate(stack, o, 'From {{ sender.name }}', 'Regards, {{ sender.name }}');
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });
    const mia = await user(o, 'Mia Assignee');
    const ben = await user(o, 'Ben Backup');
    const kai = await user(o, 'Kai Present');
    const due = plusDays(today(), -1);
    const away = await customer(stack, o, { invoices: [{ due }] });
    const here = await customer(stack, o, { invoices: [{ due }] });
    const nobody = await customer(stack, o, { invoices: [{ due }] });
    expect((await req(o.token, 'PATCH', `/v2/partners/${away.partnerId}`, { assignee_id: mia.id })).status).toBe(200);
    expect((await req(o.token, 'PATCH', `/v2/partners/${here.partnerId}`, { assignee_id: kai.id })).status).toBe(200);
    const ooo = await req(mia.token, 'POST', `/v2/users/${mia.id}/ooo`, { backup_user_id: ben.id, start_date: today(), end_date: plusDays(today(), 3) });
    expect(ooo.status, ooo.text).toBe(200);

    const run = await runCollections(stack, o);
    expect(run).toMatchObject({ sent: 3 });
    const byPartner = Object.fromEntries((await actionsOf(stack, o.token, `run_id=${run.id}`)).map((a) => [a.partner_id, a]));
    expect(byPartner[away.partnerId].sender_user_id).toBe(ben.id);
    expect(byPartner[here.partnerId].sender_user_id).toBe(kai.id);
    expect(byPartner[nobody.partnerId].sender_user_id).toBe(o.userId);
    const [mail] = await waitForMail(away.email);
    expect(mail.subject).toBe('From Ben Backup');
    expect(mail.from[0].name).toBe('Ben Backup');
    expect((await waitForMail(here.email))[0].from[0].name).toBe('Kai Present');
  });
});

describe('exactly once', () => {
  it('two runs started at once: every (invoice, step) is acted on by one of them, each customer gets one email', async () => {
    const o = await stack.onboard('Twice Org');
    const tpl = await emailTemplate(stack, o, 'Once', 'Once');
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });
    const customers = await Promise.all(Array.from({ length: 12 }, (_, i) => customer(stack, o, { invoices: [{ due: plusDays(today(), -1 - (i % 3)) }, { due: plusDays(today(), -5) }] })));
    const [a, b] = await Promise.all([req(o.token, 'POST', '/v2/collections/runs', {}), req(o.token, 'POST', '/v2/collections/runs', {})]);
    expect([a.status, b.status]).toEqual([202, 202]);
    const [ra, rb] = await Promise.all([waitForRun(stack, o, a.body.id), waitForRun(stack, o, b.body.id)]);
    expect([ra.status, rb.status]).toEqual(['completed', 'completed']);
    expect(ra.sent + rb.sent).toBeGreaterThanOrEqual(12);
    const acts = [...(await actionsOf(stack, o.token, `run_id=${ra.id}`)), ...(await actionsOf(stack, o.token, `run_id=${rb.id}`))];
    const invoices = acts.flatMap((x) => x.invoice_ids);
    expect(invoices.sort()).toEqual(customers.flatMap((c) => c.invoiceIds).sort());
    expect(acts.every((x) => x.status === 'sent')).toBe(true);
    for (const c of customers) {
      // both runs completed, so every email is in the sink; two runs could each take some of one
      // customer's invoices (two emails naming different invoices), never an invoice twice
      const expected = acts.filter((x) => x.partner_id === c.partnerId).length;
      expect(expected).toBeGreaterThanOrEqual(1);
      expect(await waitForMail(c.email, { count: expected })).toHaveLength(expected);
    }
  });
});

describe('tenants and business units', () => {
  it('another organization sees none of the runs or actions (404 / empty); a member sees only actions of customers of their units or of none; members cannot start runs', async () => {
    const o = await stack.onboard('Units Org');
    const other = await stack.onboard('Other Units Org');
    const tpl = await emailTemplate(stack, o, 'U', 'U');
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'task' }] });
    const north = (await req(o.token, 'POST', '/v2/business-units', { name: 'North' })).body.id;
    const south = (await req(o.token, 'POST', '/v2/business-units', { name: 'South' })).body.id;
    void tpl;
    const due = plusDays(today(), -2);
    const n = await customer(stack, o, { invoices: [{ due }] });
    const s = await customer(stack, o, { invoices: [{ due }] });
    const none = await customer(stack, o, { invoices: [{ due }] });
    expect((await req(o.token, 'PATCH', `/v2/partners/${n.partnerId}`, { business_unit_id: north })).status).toBe(200);
    expect((await req(o.token, 'PATCH', `/v2/partners/${s.partnerId}`, { business_unit_id: south })).status).toBe(200);
    const run = await runCollections(stack, o);
    expect(run.sent).toBe(3);

    const member = await user(o, 'North Member', 'member', [north]);
    const seen = await actionsOf(stack, member.token, `run_id=${run.id}`);
    expect(seen.map((a) => a.partner_id).sort()).toEqual([n.partnerId, none.partnerId].sort());
    expect((await req(member.token, 'POST', '/v2/collections/runs', { dry_run: true })).status).toBe(403);

    expect((await req(other.token, 'GET', `/v2/collections/runs/${run.id}`)).status).toBe(404);
    expect((await req(other.token, 'GET', '/v2/collections/runs')).body.total_records).toBe(0);
    expect(await actionsOf(stack, other.token, `run_id=${run.id}`)).toEqual([]);
    expect(await actionsOf(stack, other.token, `partner_id=${n.partnerId}`)).toEqual([]);
  });
});
