/**
 * The AR inbox after acceptance, through the gateway: customer matching with explained reasons
 * (replies to a collection email sent by a real collection run and to a payment receipt sent by the
 * receipt workflow; known contacts taught by a PATCH correction; the customer's email address and
 * domain; invoice numbers; the signature's company), auto-assignment at, below and above the
 * threshold and to the OOO backup, business units and tenant isolation, the customer timeline's
 * `reply` items, the events, PATCH's rules, and what a message leads to (a promise to pay, a dispute,
 * a suggestion; a bounce that stops the collection emails to the address).
 *
 * Reached through the API: customers and invoices (middleware push), their assignee (PATCH
 * /v2/partners), units, a member, OOO, mailbox settings, a collection policy and run (MailDev
 * receives the email), a bank statement, its payment, approval and receipt. Every message is
 * delivered over SMTP (nodemailer) to the stack's inbound listener, addressed to the organization's
 * inbound host.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForStatement } from './support/cash.js';
import { actionsOf, customer, emailTemplate, plusDays, policy, runCollections, todayIn } from './support/collections.js';
import { compose, rawMessage, receive } from './support/inbox.js';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let other: Org;
let memberToken: string;
let north: string;
let south: string;
let collector: string;
let backup: string;
const c = {} as Record<'alpha' | 'beta' | 'gamma', { partnerId: string; invoiceIds: string[]; email: string }>;
const num = {} as Record<'alpha1' | 'alpha2' | 'beta1' | 'gamma1', string>;
let n = 0;

const req = (method: string, path: string, token: string, body?: unknown) => stack.request(method, path, { token, body });
const mail = (opts: { from: string; subject?: string; text: string; inReplyTo?: string; references?: string[] }) =>
  compose({ from: opts.from, to: 'ar@inbound.example', subject: opts.subject ?? 'Hello', messageId: `<match-${Date.now()}-${n++}@sender.example>`, text: opts.text, inReplyTo: opts.inReplyTo, references: opts.references });
const settings = async (auto_assign: boolean, auto_assign_threshold: number) => {
  const r = await req('PUT', '/v2/mailbox-settings', org.token, { transport_provider: 'oauth_sync', google: { enabled: true }, centralized_inbox: { auto_assign, auto_assign_threshold, matching_guidelines: null } });
  expect(r.status, r.text).toBe(200);
  return r;
};
const rules = (m: any) => m.match_reasons.map((r: any) => r.rule);

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  [org, other] = await Promise.all([stack.onboard('Inbox Org'), stack.onboard('Other Inbox Org')]);
  const unit = async (name: string) => (await req('POST', '/v2/business-units', org.token, { name })).body.id as string;
  north = await unit('North');
  south = await unit('South');
  const user = async (email: string, role: string, units: string[]) => {
    const r = await req('POST', '/v2/users', org.token, { email, name: email, role, business_unit_ids: units, permissions: [] });
    expect(r.status, r.text).toBe(200);
    return r.body.id as string;
  };
  collector = await user(`collector-${randomBytes(3).toString('hex')}@inbox.example`, 'admin', []);
  backup = await user(`backup-${randomBytes(3).toString('hex')}@inbox.example`, 'admin', []);
  const member = await user(`member-${randomBytes(3).toString('hex')}@inbox.example`, 'member', [north]);
  const { runCli } = await import('@rp/admin/cli');
  memberToken = ((await runCli(['token', 'issue', '--org', org.organizationId, '--user', member], stack.env)) as { token: string }).token;

  const today = todayIn('Europe/Berlin');
  const base = 8_100_000 + Math.floor(Math.random() * 800_000);
  [num.alpha1, num.alpha2, num.beta1, num.gamma1] = [0, 1, 2, 3].map((i) => String(base + i)) as [string, string, string, string];
  c.alpha = await customer(stack, org, { name: 'Alpha Trading GmbH', email: 'ap@alpha.example', invoices: [{ number: num.alpha1, due: today, amount: 1190 }, { number: num.alpha2, due: plusDays(today, 20), amount: 595 }] });
  c.beta = await customer(stack, org, { name: 'Beta Supplies Ltd', email: 'ap@beta.example', invoices: [{ number: num.beta1, due: plusDays(today, 20) }] });
  c.gamma = await customer(stack, org, { name: 'Gamma Foods BV', email: 'payables@gamma.example', invoices: [{ number: num.gamma1, due: plusDays(today, 20) }] });
  for (const [p, patch] of [[c.alpha.partnerId, { assignee_id: collector }], [c.beta.partnerId, { business_unit_id: north }], [c.gamma.partnerId, { business_unit_id: south }]] as const) {
    const r = await req('PATCH', `/v2/partners/${p}`, org.token, patch);
    expect(r.status, r.text).toBe(200);
  }
});

afterAll(async () => {
  await stack?.close();
});

describe('threading to our own outbound emails', () => {
  it('a reply to a collection email sent by a real collection run is that customer\'s, in reply to its action', async () => {
    const template = await emailTemplate(stack, org, 'Invoice due', '<p>Please pay.</p>');
    await policy(stack, org, { steps: [{ offset_days: 0, channel: 'email', email_template_id: template }] });
    const run = await runCollections(stack, org);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'completed', sent: 1 });
    const [sent] = await waitForMail(c.alpha.email);
    const actions = await req('GET', `/v2/collections/actions?partner_id=${c.alpha.partnerId}`, org.token);
    const action = actions.body.data.find((a: any) => a.channel === 'email');
    const m = await receive(stack, org, await mail({ from: 'someone.private@gmail.com', subject: 'Re: Invoice due', text: 'We will look into it.', inReplyTo: `<${sent.messageId}>`, references: [`<${sent.messageId}>`] }));
    expect(m.partner_id).toBe(c.alpha.partnerId);
    expect(m.in_reply_to).toEqual({ object: 'collection_action', id: action.id });
    expect(rules(m)).toEqual(['reply_to_outbound']);
    expect(m.match_confidence).toBe(97);
    expect(m.thread_id).toBe(`<${sent.messageId}>`);
    // the reply taught its sender: a later message of theirs, in no thread, is Alpha's by that
    const later = await receive(stack, org, await mail({ from: 'Someone.Private@gmail.com', text: 'One more question.' }));
    expect([later.partner_id, rules(later), later.in_reply_to]).toEqual([c.alpha.partnerId, ['known_contact'], null]);
    expect(later.match_reasons[0].detail).toContain('from an earlier reply');
    // a bounce threaded to the same email is Alpha's too, but a mail system is nobody's contact
    const bounce = await receive(
      stack,
      org,
      await mail({ from: 'mailer-daemon@googlemail.com', subject: 'Delivery Status Notification (Failure)', text: `Your message wasn't delivered to ${c.alpha.email} because the address couldn't be found.`, inReplyTo: `<${sent.messageId}>`, references: [`<${sent.messageId}>`] }),
    );
    expect([bounce.category, bounce.partner_id]).toEqual(['bounce', c.alpha.partnerId]);
    const daemon = await receive(stack, org, await mail({ from: 'mailer-daemon@googlemail.com', subject: 'Delivery Status Notification (Failure)', text: 'Your message to someone@nowhere.example was not delivered.' }));
    expect(rules(daemon)).not.toContain('known_contact');
  });

  it('a reply to a payment receipt is the paying customer\'s, in reply to the receipt', async () => {
    const st = await req('POST', '/v2/bank-statements', org.token, {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount: '1190.00', booking_date: '2026-11-20', value_date: '2026-11-20', counterparty_name: 'Alpha Trading GmbH', counterparty_account: null, remittance_information: `RE ${num.alpha1}`, bank_reference: null }],
    });
    expect(st.status, st.text).toBe(200);
    const ready = await waitForStatement(stack, org.token, st.body.id as string);
    const txId = (ready.transactions as { id: string }[])[0]!.id;
    const payments = await req('GET', `/v2/payments?bank_transaction_id=${txId}`, org.token);
    expect(payments.body.data[0]?.partner_id, payments.text).toBe(c.alpha.partnerId);
    const paymentId = payments.body.data[0].id as string;
    expect((await req('POST', `/v2/payments/${paymentId}/approve`, org.token)).status).toBe(200);
    const receipt = await req('POST', '/v2/cash-app/outreach/payment-receipt', org.token, { payment_id: paymentId });
    expect(receipt.status, receipt.text).toBe(200);
    const mails = await waitForMail(c.alpha.email, { count: 2 });
    const sent = mails.find((x) => x.messageId && !x.subject.startsWith('Invoice due'));
    expect(sent, JSON.stringify(mails.map((x) => x.subject))).toBeTruthy();
    const m = await receive(stack, org, await mail({ from: 'someone.else@gmail.com', subject: 'Re: receipt', text: 'Thanks.', inReplyTo: `<${sent.messageId}>` }));
    expect(m.partner_id).toBe(c.alpha.partnerId);
    expect(m.in_reply_to).toEqual({ object: 'outreach_record', id: receipt.body.id });
    expect(rules(m)).toEqual(['reply_to_outbound']);
  });
});

describe('matching by sender and content', () => {
  it('a stranger is matched to nobody; a correction teaches the address, and the next message matches it as a known contact', async () => {
    const first = await receive(stack, org, await mail({ from: 'Pat <pat.unknown@gmail.com>', text: 'Hello, a question about our account.' }));
    expect(first).toMatchObject({ partner_id: null, match_confidence: 0, match_reasons: [], status: 'unassigned', assignee_id: null });
    const fixed = await req('PATCH', `/v2/inbox/messages/${first.id}`, org.token, { partner_id: c.beta.partnerId });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body).toMatchObject({ partner_id: c.beta.partnerId, match_confidence: 100, match_reasons: [{ rule: 'manual' }] });
    const next = await receive(stack, org, await mail({ from: 'PAT.UNKNOWN@gmail.com', text: 'Another question.' }));
    expect(next.partner_id).toBe(c.beta.partnerId);
    expect(rules(next)).toEqual(['known_contact']);
    expect(next.match_confidence).toBe(92);
    // a colleague replying in that thread from another free-mail address: the thread's customer
    const colleague = await receive(stack, org, await mail({ from: 'pat.colleague@gmail.com', text: 'Adding to what Pat wrote.', inReplyTo: first.message_id, references: [first.message_id] }));
    expect([colleague.partner_id, rules(colleague), colleague.match_confidence, colleague.in_reply_to]).toEqual([c.beta.partnerId, ['same_thread'], 85, null]);
  });

  it('the customer\'s own address, then its email domain', async () => {
    const exact = await receive(stack, org, await mail({ from: 'ap@alpha.example', text: 'Hello.' }));
    expect([exact.partner_id, rules(exact), exact.match_confidence]).toEqual([c.alpha.partnerId, ['customer_email'], 90]);
    const domain = await receive(stack, org, await mail({ from: 'new.person@Alpha.example', text: 'Hello.' }));
    expect([domain.partner_id, rules(domain), domain.match_confidence]).toEqual([c.alpha.partnerId, ['sender_domain'], 70]);
    expect(domain.match_reasons[0].detail).toContain('alpha.example');
  });

  it('invoice numbers in the message resolve to their customer', async () => {
    const one = await receive(stack, org, await mail({ from: 'treasury@gmail.com', subject: `Invoice ${num.gamma1}`, text: 'Please send a copy.' }));
    expect([one.partner_id, rules(one), one.match_confidence]).toEqual([c.gamma.partnerId, ['invoice_number'], 75]);
    const two = await receive(stack, org, await mail({ from: 'treasury@gmail.com', text: `Regarding invoices ${num.alpha1} and ${num.alpha2}.` }));
    expect([two.partner_id, rules(two), two.match_confidence]).toEqual([c.alpha.partnerId, ['invoice_number'], 85]);
    // evidence for two customers: the stronger wins, lowered by the other
    const mixed = await receive(stack, org, await mail({ from: 'ap@beta.example', text: `About invoice ${num.gamma1}.` }));
    expect(mixed.partner_id).toBe(c.beta.partnerId);
    expect(rules(mixed)).toEqual(['customer_email', 'conflict']);
    expect(mixed.match_confidence).toBe(90 - 38);
  });

  it('the company named in the signature', async () => {
    const m = await receive(stack, org, await mail({ from: 'jane.doe@gmail.com', text: 'Hello,\n\nwe have a question about the last statement.\n\nBest regards\nJane Doe\nBeta Supplies Ltd\n' }));
    expect(m.partner_id).toBe(c.beta.partnerId);
    expect(rules(m)).toContain('signature_company');
  });
});

describe('assignment', () => {
  it('never configured: no automatic assignment, whatever the confidence', async () => {
    const m = await receive(stack, org, await mail({ from: 'ap@alpha.example', text: 'Hello.' }));
    expect(m).toMatchObject({ partner_id: c.alpha.partnerId, match_confidence: 90, status: 'unassigned', assignee_id: null });
  });

  it('assigns at the threshold, not below it, and above it; to the customer\'s assignee', async () => {
    const domainMail = () => mail({ from: `someone.${n}@alpha.example`, text: 'Hello.' });
    expect((await settings(true, 70)).status).toBe(200);
    const at = await receive(stack, org, await domainMail());
    expect(at).toMatchObject({ match_confidence: 70, partner_id: c.alpha.partnerId, status: 'assigned', assignee_id: collector });
    expect((await settings(true, 71)).status).toBe(200);
    const below = await receive(stack, org, await domainMail());
    expect(below).toMatchObject({ match_confidence: 70, partner_id: c.alpha.partnerId, status: 'unassigned', assignee_id: null });
    expect((await settings(true, 60)).status).toBe(200);
    const above = await receive(stack, org, await domainMail());
    expect(above).toMatchObject({ match_confidence: 70, status: 'assigned', assignee_id: collector });
    // a confident match to a customer nobody is assigned to: its customer, unassigned
    const noCollector = await receive(stack, org, await mail({ from: 'payables@gamma.example', text: 'Hello.' }));
    expect(noCollector).toMatchObject({ match_confidence: 90, partner_id: c.gamma.partnerId, status: 'unassigned', assignee_id: null });
    // auto_assign off: the best guess stays, unassigned
    expect((await settings(false, 60)).status).toBe(200);
    const off = await receive(stack, org, await domainMail());
    expect(off).toMatchObject({ partner_id: c.alpha.partnerId, status: 'unassigned', assignee_id: null });

    const events = await req('GET', `/v2/events?type=inbox_message.assigned&page_size=100`, org.token);
    expect(events.status, events.text).toBe(200);
    const assignedIds = events.body.data.map((e: any) => e.data.object.id);
    expect(assignedIds).toEqual(expect.arrayContaining([at.id, above.id]));
    expect(assignedIds).not.toContain(below.id);
    const received = await req('GET', `/v2/events?type=inbox_message.received&page_size=200`, org.token);
    const receivedBelow = received.body.data.filter((e: any) => e.data.object.id === below.id);
    expect(receivedBelow).toHaveLength(1);
    expect(receivedBelow[0].data.object).toMatchObject({ object: 'inbox_message', status: 'unassigned', processing_state: 'processed', partner_id: c.alpha.partnerId });
  });

  it('assigns to the assignee\'s out-of-office backup while the assignee is out', async () => {
    const today = todayIn('Europe/Berlin');
    const out = await req('POST', `/v2/users/${collector}/ooo`, org.token, { backup_user_id: backup, start_date: today, end_date: plusDays(today, 3) });
    expect(out.status, out.text).toBe(200);
    expect((await settings(true, 80)).status).toBe(200);
    const m = await receive(stack, org, await mail({ from: 'ap@alpha.example', text: 'Hello again.' }));
    expect(m).toMatchObject({ partner_id: c.alpha.partnerId, status: 'assigned', assignee_id: backup });
    const ended = await req('PATCH', `/v2/users/${collector}/ooo`, org.token, { end_date: null });
    expect(ended.status, ended.text).toBe(200);
  });
});

describe('the inbox API', () => {
  it('lists newest first with filters; members see their units\' customers, unmatched mail only with every unit; other organizations nothing', async () => {
    await settings(false, 80);
    const b = await receive(stack, org, await mail({ from: 'ap@beta.example', text: 'Beta here.' }));
    const g = await receive(stack, org, await mail({ from: 'payables@gamma.example', text: 'Gamma here.' }));
    const u = await receive(stack, org, await mail({ from: 'nobody.known@gmail.com', text: 'Who am I?' }));
    const all = await req('GET', '/v2/inbox/messages?page_size=200', org.token);
    expect(all.status, all.text).toBe(200);
    const ids = all.body.data.map((m: any) => m.id);
    expect(ids.slice(0, 3)).toEqual([u.id, g.id, b.id]);
    const times = all.body.data.map((m: any) => m.received_at);
    expect([...times].sort().reverse()).toEqual(times);
    const byPartner = await req('GET', `/v2/inbox/messages?partner_id=${c.gamma.partnerId}`, org.token);
    expect(byPartner.body.data[0].id).toBe(g.id);
    expect(byPartner.body.data.every((m: any) => m.partner_id === c.gamma.partnerId)).toBe(true);
    const assigned = await req('GET', `/v2/inbox/messages?status=assigned&assignee_id=${collector}`, org.token);
    expect(assigned.body.data.length).toBeGreaterThan(0);
    expect(assigned.body.data.every((m: any) => m.status === 'assigned' && m.assignee_id === collector)).toBe(true);

    const seen = await req('GET', '/v2/inbox/messages?page_size=200', memberToken);
    const seenIds = seen.body.data.map((m: any) => m.id);
    expect(seenIds).toContain(b.id);
    expect(seenIds).not.toContain(g.id);
    expect(seenIds).not.toContain(u.id);
    // Alpha belongs to no unit: visible to the member
    expect(seen.body.data.some((m: any) => m.partner_id === c.alpha.partnerId)).toBe(true);
    expect((await req('GET', `/v2/inbox/messages/${g.id}`, memberToken)).status).toBe(404);
    expect((await req('GET', `/v2/inbox/messages/${u.id}`, memberToken)).status).toBe(404);
    expect((await req('PATCH', `/v2/inbox/messages/${b.id}`, memberToken, { partner_id: c.gamma.partnerId })).status).toBe(422);
    // the event log honours the same rule: a member never reads an unmatched message through its events
    const eventIds = async (token: string) =>
      ((await req('GET', '/v2/events?type=inbox_message.received&page_size=200', token)).body.data as any[]).map((e) => e.data.object.id);
    expect(await eventIds(org.token)).toEqual(expect.arrayContaining([b.id, g.id, u.id]));
    const memberEvents = await eventIds(memberToken);
    expect(memberEvents).toContain(b.id);
    expect(memberEvents).not.toContain(g.id);
    expect(memberEvents).not.toContain(u.id);

    expect((await req('GET', `/v2/inbox/messages/${b.id}`, other.token)).status).toBe(404);
    expect((await req('PATCH', `/v2/inbox/messages/${b.id}`, other.token, { status: 'archived' })).status).toBe(404);
    const theirs = await req('GET', '/v2/inbox/messages', other.token);
    expect(theirs.body).toMatchObject({ data: [], total_records: 0 });
  });

  it('PATCH assigns, archives, recategorizes, and refuses what it cannot do', async () => {
    const m = await receive(stack, org, await mail({ from: 'ap@beta.example', text: 'Please call me.' }));
    const assigned = await req('PATCH', `/v2/inbox/messages/${m.id}`, org.token, { assignee_id: backup, category: 'question' });
    expect(assigned.body).toMatchObject({ status: 'assigned', assignee_id: backup, category: 'question', category_confidence: 100 });
    const archived = await req('PATCH', `/v2/inbox/messages/${m.id}`, org.token, { status: 'archived' });
    expect(archived.body).toMatchObject({ status: 'archived', assignee_id: backup });
    const cleared = await req('PATCH', `/v2/inbox/messages/${m.id}`, org.token, { status: 'unassigned' });
    expect(cleared.body).toMatchObject({ status: 'unassigned', assignee_id: null });
    const events = await req('GET', `/v2/events?type=inbox_message.assigned&page_size=200`, org.token);
    expect(events.body.data.filter((e: any) => e.data.object.id === m.id)).toHaveLength(1);

    const bad = async (body: unknown, loc: string) => {
      const r = await req('PATCH', `/v2/inbox/messages/${m.id}`, org.token, body);
      expect(r.status, r.text).toBe(422);
      expect(r.body.type).toBe('request-validation');
      expect(r.body.errors.map((e: any) => e.loc.join('.'))).toContain(loc);
    };
    await bad({ status: 'assigned' }, 'body.status');
    await bad({ partner_id: randomUUID() }, 'body.partner_id');
    await bad({ assignee_id: randomUUID() }, 'body.assignee_id');
    await bad({ category: 'spam' }, 'body.category');
    const empty = await req('PATCH', `/v2/inbox/messages/${m.id}`, org.token, {});
    expect(empty.status).toBe(422);
    expect((await req('PATCH', `/v2/inbox/messages/${randomUUID()}`, org.token, { status: 'archived' })).status).toBe(404);
    expect((await req('GET', '/v2/inbox/messages/not-a-uuid', org.token)).status).toBe(422);
    const after = await req('GET', `/v2/inbox/messages/${m.id}`, org.token);
    expect(after.body).toMatchObject({ status: 'unassigned', assignee_id: null, category: 'question', partner_id: c.beta.partnerId });
  });

  it('every message matched to a customer is on its timeline as a reply', async () => {
    const m = await receive(stack, org, await mail({ from: 'Gus <payables@gamma.example>', subject: 'Our question', text: 'Timeline words: when do you deliver?' }));
    const tl = await req('GET', `/v2/partners/${c.gamma.partnerId}/activity?type=reply&page_size=200`, org.token);
    expect(tl.status, tl.text).toBe(200);
    const item = tl.body.data.find((i: any) => i.ref.id === m.id);
    expect(item).toEqual({ type: 'reply', occurred_at: m.received_at, summary: 'Email from Gus <payables@gamma.example> — Our question', ref: { object: 'inbox_message', id: m.id } });
    const all = await req('GET', `/v2/partners/${c.gamma.partnerId}/activity?page_size=200`, org.token);
    expect(all.body.data.filter((i: any) => i.type === 'reply').length).toBe(tl.body.data.length);
    // unmatched mail is on nobody's timeline
    const others = await req('GET', `/v2/partners/${c.beta.partnerId}/activity?type=reply&page_size=200`, org.token);
    expect(others.body.data.some((i: any) => i.ref.id === m.id)).toBe(false);
  });
});

describe('what a message leads to', () => {
  const spelled = (date: string) => {
    const d = new Date(`${date}T12:00:00Z`);
    return `${d.getUTCDate()} ${d.toLocaleString('en-GB', { month: 'long', timeZone: 'UTC' })} ${d.getUTCFullYear()}`;
  };

  it('a promise to pay from the customer is recorded with the message as its source; a dispute likewise', async () => {
    const date = plusDays(todayIn('Europe/Berlin'), 7);
    const p = await receive(stack, org, await mail({ from: 'ap@beta.example', subject: `Invoice ${num.beta1}`, text: `Hello,\n\nwe will pay invoice ${num.beta1} on ${spelled(date)}.\n\nKind regards\nBeta Supplies Ltd` }));
    expect(p).toMatchObject({ category: 'promise_to_pay', partner_id: c.beta.partnerId });
    const promiseRef = p.results.find((r: any) => r.object === 'promise_to_pay');
    expect(promiseRef, JSON.stringify(p)).toBeTruthy();
    const promise = await req('GET', `/v2/promises-to-pay/${promiseRef.id}`, org.token);
    expect(promise.body).toMatchObject({ partner_id: c.beta.partnerId, invoice_ids: [c.beta.invoiceIds[0]], promised_date: date, status: 'open', source: { object: 'inbox_message', id: p.id } });

    const d = await receive(stack, org, await mail({ from: 'payables@gamma.example', subject: `Invoice ${num.gamma1}`, text: `Hello,\n\ninvoice ${num.gamma1} is wrong, the goods arrived damaged.\n\nRegards\nGamma Foods BV` }));
    expect(d).toMatchObject({ category: 'dispute', partner_id: c.gamma.partnerId });
    const disputeRef = d.results.find((r: any) => r.object === 'dispute');
    expect(disputeRef, JSON.stringify(d)).toBeTruthy();
    const dispute = await req('GET', `/v2/disputes/${disputeRef.id}`, org.token);
    expect(dispute.body).toMatchObject({ invoice_id: c.gamma.invoiceIds[0], reason_code: 'damaged', status: 'open', source: { object: 'inbox_message', id: d.id } });
  });

  it('a promise from a sender matched below the threshold is only a suggestion', async () => {
    const date = plusDays(todayIn('Europe/Berlin'), 7);
    // only the invoice number names the customer: 75, below the default threshold 80
    const m = await receive(stack, org, await mail({ from: 'a.stranger@gmail.com', subject: `Invoice ${num.alpha2}`, text: `We will pay invoice ${num.alpha2} on ${spelled(date)}.` }));
    expect(m).toMatchObject({ category: 'promise_to_pay', partner_id: c.alpha.partnerId, results: [] });
    expect(m.match_confidence).toBe(75);
    expect(m.suggestions).toEqual([expect.objectContaining({ type: 'promise_to_pay', promised_date: date })]);
  });

  it('a delivery-status notification for a customer\'s address stops the collection emails to it', async () => {
    const delta = await customer(stack, org, { name: 'Delta Logistik GmbH', email: 'ap@delta-logistik.example', invoices: [{ due: todayIn('Europe/Berlin') }] });
    const dsn = rawMessage(
      [
        'From: Mail Delivery System <MAILER-DAEMON@mx.delta-logistik.example>',
        'To: no-reply@receivables.local',
        'Subject: Undelivered Mail Returned to Sender',
        `Message-ID: <dsn-${Date.now()}@mx.delta-logistik.example>`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/report; report-type=delivery-status; boundary="R"',
      ],
      [
        '--R',
        'Content-Type: text/plain',
        '',
        'This is the mail system. Your message could not be delivered to ap@delta-logistik.example.',
        '--R',
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; mx.delta-logistik.example',
        '',
        'Final-Recipient: rfc822; ap@delta-logistik.example',
        'Action: failed',
        'Status: 5.1.1',
        'Diagnostic-Code: smtp; 550 5.1.1 mailbox unavailable',
        '',
        '--R--',
        '',
      ].join('\n'),
    );
    const m = await receive(stack, org, dsn);
    expect(m).toMatchObject({ category: 'bounce', processing_state: 'processed', partner_id: delta.partnerId });
    expect(rules(m)).toContain('bounced_recipient');
    const run = await runCollections(stack, org);
    expect(run, JSON.stringify(run)).toMatchObject({ status: 'completed', sent: 0 });
    const actions = await actionsOf(stack, org.token, `run_id=${run.id}&partner_id=${delta.partnerId}`);
    expect(actions).toEqual([expect.objectContaining({ channel: 'email', status: 'skipped', skip_reason: 'email_bouncing' })]);
  });
});
