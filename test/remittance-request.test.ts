/**
 * Remittance requests end to end: asked through the gateway for a deposit that statement processing
 * could not apply, sent by the remittance-request workflow through a real SMTP sink (MailDev), and
 * threaded by the view cash_app.outbound_messages. Every state is reached through the API (ledger
 * pushes, bank statements, approvals, mailbox settings, email templates, business units and users);
 * the only set-ups outside it are a worker whose SMTP server does not answer or rejects (a failed
 * send), a trigger that refuses the "sent" write (a database outage right after the SMTP server
 * accepted) and the CLI that issues a member's token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporal, startServiceWorker, type TemporalHandle } from '@rp/platform';
import { cashAppModule, loadCashAppConfig } from '@rp/cash-app';
import { workflowsPath } from '@rp/workflows/paths';
import { ENTITY_ID, ORGANIZATION_ID, remittanceRequestWorkflowId, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { rejectingSmtp } from './support/smtp-gate.js';
import { failUpdates } from './support/faults.js';

let stack: TestStack;
let org: Org;
let other: Org;
let temporal: TemporalHandle;

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: { PAYMENT_RECEIPT_MAX_ATTEMPTS: '2', PAYMENT_RECEIPT_RETRY_SECONDS: '1' } });
  org = await stack.onboard('Remittance Org');
  other = await stack.onboard('Other Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

const hex = () => randomBytes(4).toString('hex');

/** A customer (pushed like the middleware does) with open invoices; returns its id and email. */
async function customer(o: Org, name: string, invoices: { number: string; amount: number }[], opts: { email?: string; businessUnitId?: string } = {}) {
  const code = `C-${hex()}`;
  const email = opts.email ?? `ap.${hex()}@payer.example`;
  const c = await pushCustomers(stack, o.apiKey, [{ ...customerRecord({ customer_code: code, name1: name, smtp_addr: email }), ...(opts.businessUnitId ? { business_unit_id: opts.businessUnitId } : {}) }]);
  expect(c.body.results[0].success, JSON.stringify(c.body)).toBe(true);
  if (invoices.length) {
    const pushed = await pushInvoices(stack, o.apiKey, invoices.map((i) => invoiceRecord({ customer_code: code, document_number: i.number, reference: `INV-${i.number}`, amount_in_document_currency: i.amount })));
    expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
  }
  return { partnerId: c.body.results[0].service_id as string, email };
}

/** One bank line uploaded in a statement and processed; returns the transaction as the statement answers it. */
async function deposit(o: Org, t: { amount: string; counterparty_name?: string | null; remittance_information?: string | null; counterparty_iban?: string | null }) {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: o.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [
        {
          amount: t.amount,
          booking_date: '2026-10-15',
          value_date: '2026-10-16',
          counterparty_name: t.counterparty_name ?? null,
          counterparty_iban: t.counterparty_iban ?? null,
          remittance_information: t.remittance_information ?? null,
          bank_reference: `BREF-${hex()}`,
        },
      ],
    },
  });
  expect(res.status, res.text).toBe(200);
  return (await waitForStatement(stack, o.token, res.body.id)).transactions[0];
}

const ask = (o: Pick<Org, 'token'>, body: Record<string, unknown>) => stack.request('POST', '/v2/cash-app/outreach/remittance-request', { token: o.token, body });
const result = (recordId: string) => temporal.client.workflow.getHandle(remittanceRequestWorkflowId(recordId)).result();

async function deadSmtpPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('remittance request', () => {
  it('emails the payer matching identifies, Reply-To the AR inbox, once; the record and the view thread the reply', async () => {
    const { partnerId, email } = await customer(org, 'Nordwind Spedition GmbH', [
      { number: '8100001', amount: 1000 },
      { number: '8100002', amount: 500 },
    ]);
    const tx = await deposit(org, { amount: '737.15', counterparty_name: 'NORDWIND SPEDITION GMBH', remittance_information: 'Zahlung Oktober' });

    const res = await ask(org, { bank_transaction_id: tx.id });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'outreach_record', outreach_type: 'remittance_request', status: 'pending', bank_transaction_id: tx.id, partner_id: partnerId, payment_id: null, email_id: null });
    const id = res.body.id as string;
    const messageId = `<${id}@receivables.local>`;
    expect(await result(id)).toEqual({ status: 'sent', emailId: id, messageId });
    const described = await temporal.client.workflow.getHandle(remittanceRequestWorkflowId(id)).describe();
    expect(described.taskQueue).toBe(TASK_QUEUES.cashApp);
    expect(described.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);
    expect(described.typedSearchAttributes.get(ENTITY_ID)).toBe(tx.id);
    const handle = temporal.client.workflow.getHandle(remittanceRequestWorkflowId(id));
    await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'remittance-request.json');

    const mails = await waitForMail(email);
    expect(mails).toHaveLength(1);
    const m = mails[0];
    expect(m.to.map((t: { address: string }) => t.address)).toEqual([email]);
    expect(m.headers['reply-to']).toBe(`ar@${org.organizationId}.inbound.receivables.local`);
    expect(`<${m.messageId}>`).toBe(messageId);
    expect(m.subject).toBe('Which invoices does your payment of EUR 737.15 on 2026-10-15 pay?');
    expect(m.text).toContain('Dear Nordwind Spedition GmbH,');
    expect(m.text).toContain('  Date: 2026-10-15\n  Amount: 737.15\n  Currency: EUR\n');
    expect(m.text).toContain(`  Reference: ${tx.bank_reference}`);
    expect(m.text).toContain('  Payment details: Zahlung Oktober');
    expect(m.text).toContain('Invoice 8100001');
    expect(m.text).toContain('Invoice 8100002, due');

    const got = await stack.request('GET', `/v2/cash-app/outreach/${id}`, { token: org.token });
    expect(got.body).toMatchObject({ status: 'sent', email_id: messageId, recipient: email, error: null });
    // the inbox threads a reply (In-Reply-To: the Message-ID) to this record through the view
    const view = await stack.sql('SELECT ref_object, ref_id::text, outreach_type, partner_id::text, bank_transaction_id::text FROM cash_app.outbound_messages WHERE organization_id = $1 AND message_id = $2', [
      org.organizationId,
      messageId,
    ]);
    expect(view).toEqual([{ ref_object: 'outreach_record', ref_id: id, outreach_type: 'remittance_request', partner_id: partnerId, bank_transaction_id: tx.id }]);
    const sent = await stack.request('GET', `/v2/events?type=outreach.sent&page_size=200`, { token: org.token });
    expect(sent.body.data.filter((e: any) => e.data.object.id === id)).toHaveLength(1);

    // asking again answers the same record and sends nothing; naming another customer is a conflict
    const again = await ask(org, { bank_transaction_id: tx.id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id, status: 'sent' });
    const elsewhere = await customer(org, 'Anderer Kunde AG', []);
    const conflict = await ask(org, { bank_transaction_id: tx.id, partner_id: elsewhere.partnerId });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ type: 'conflict', detail: expect.stringContaining(id) });
    const listed = await stack.request('GET', `/v2/cash-app/outreach?outreach_type=remittance_request&bank_transaction_id=${tx.id}`, { token: org.token });
    expect(listed.body.data.map((r: any) => r.id)).toEqual([id]);
    const receipts = await stack.request('GET', `/v2/cash-app/outreach?outreach_type=payment_receipt&bank_transaction_id=${tx.id}`, { token: org.token });
    expect(receipts.body.total_records).toBe(0);
    expect(await waitForMail(email, { count: 2, timeoutMs: 1000 })).toHaveLength(1);
    expect(await waitForMail(elsewhere.email, { timeoutMs: 300 })).toHaveLength(0);
  });

  it('makes one request of concurrent requests for the same deposit', async () => {
    const { email } = await customer(org, 'Parallel Papier KG', [{ number: '8200001', amount: 300 }]);
    const tx = await deposit(org, { amount: '99.99', counterparty_name: 'Parallel Papier KG' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => ask(org, { bank_transaction_id: tx.id })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect((await result(answers[0]!.body.id)).status).toBe('sent');
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.outreach_records WHERE bank_transaction_id = $1`, [tx.id]);
    expect(n).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await waitForMail(email, { count: 2, timeoutMs: 1000 })).toHaveLength(1);
  });

  it('asks the customer named; without one and nobody identifiable, 422 says why; a customer without an address is refused', async () => {
    const named = await customer(org, 'Benannt Bau GmbH', [{ number: '8300001', amount: 120 }]);
    const anon = await deposit(org, { amount: '55.00', counterparty_name: 'QXZ Unbekannt' });
    const unknown = await ask(org, { bank_transaction_id: anon.id });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([{ loc: ['body', 'partner_id'], msg: expect.stringContaining('"QXZ Unbekannt" is no customer\'s name'), type: 'value_error.payer_unknown' }]);
    expect(unknown.body).toMatchObject({ type: 'request-validation', status: 422, detail: expect.stringMatching(/^partner_id is required: matching cannot tell who sent the deposit/) });
    const nameless = await deposit(org, { amount: '56.00', counterparty_name: null });
    const none = await ask(org, { bank_transaction_id: nameless.id });
    expect(none.body.errors[0].msg).toContain('it carries no account and it carries no counterparty name');
    expect(await stack.sql(`SELECT id FROM cash_app.outreach_records WHERE bank_transaction_id IN ($1, $2)`, [anon.id, nameless.id])).toEqual([]);

    const res = await ask(org, { bank_transaction_id: anon.id, partner_id: named.partnerId });
    expect(res.status, res.text).toBe(200);
    expect(res.body.partner_id).toBe(named.partnerId);
    expect((await result(res.body.id)).status).toBe('sent');
    expect(await waitForMail(named.email)).toHaveLength(1);

    const mute = await customer(org, 'Ohne Adresse OHG', [], { email: '' });
    const noEmail = await ask(org, { bank_transaction_id: nameless.id, partner_id: mute.partnerId });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.errors[0]).toMatchObject({ loc: ['body', 'partner_id'], type: 'value_error.no_email' });
    const stranger = await ask(org, { bank_transaction_id: nameless.id, partner_id: randomUUID() });
    expect(stranger.body.errors[0]).toMatchObject({ loc: ['body', 'partner_id'], type: 'value_error.not_found' });
    expect((await ask(org, { bank_transaction_id: nameless.id, partner_id: 'not-a-uuid' })).body.errors[0].loc).toEqual(['body', 'partner_id']);

    // two customers whose names fit equally (legal-form twins, none written on the line): matching names neither
    await customer(org, 'Zwilling Zange AG', []);
    await customer(org, 'Zwilling Zange GmbH', []);
    const twins = await deposit(org, { amount: '57.00', counterparty_name: 'ZWILLING ZANGE' });
    const tie = await ask(org, { bank_transaction_id: twins.id });
    expect(tie.status).toBe(422);
    expect(tie.body.errors[0]).toMatchObject({ loc: ['body', 'partner_id'], type: 'value_error.payer_ambiguous' });
    expect(tie.body.errors[0].msg).toContain('"Zwilling Zange AG"');
    expect(tie.body.errors[0].msg).toContain('"Zwilling Zange GmbH"');
  });

  it('renders the default template of the "Remittance requests" folder, and Reply-To the custom inbound host', async () => {
    const o = await stack.onboard('Template Remit Org');
    const admin = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: o.token, body });
    const settings = await admin('PUT', '/v2/mailbox-settings', { transport_provider: 'domain_send', domain_send: { domain_name: 'mail.remit.example', inbound_parse_hostname: 'Replies.Remit.Example', api_key: 'sk-remit-0000000000' } });
    expect(settings.status, settings.text).toBe(200);
    const folder = await admin('POST', '/v1/email-template-folders', { name: 'Remittance requests' });
    expect(folder.status, folder.text).toBe(200);
    const tpl = await admin('POST', '/v1/email-templates', {
      folder_id: folder.body.id,
      name: 'Ask',
      is_default: true,
      subject: '{{ organization.name }}: {{ payment.currency }} {{ payment.amount }} of {{ payment.date }}?',
      body: 'Hello {{ customer.name }}, which of {% for invoice in invoices %}{{ invoice.number }}{% unless forloop.last %}, {% endunless %}{% endfor %} does ref {{ payment.reference }} pay?',
    });
    expect(tpl.status, tpl.text).toBe(200);
    const { email } = await customer(o, 'Vorlage Verlag GmbH', [
      { number: '8400001', amount: 10 },
      { number: '8400002', amount: 20 },
    ]);
    const tx = await deposit(o, { amount: '1234.5', counterparty_name: 'Vorlage Verlag GmbH' });
    const res = await ask(o, { bank_transaction_id: tx.id });
    expect(res.status, res.text).toBe(200);
    expect((await result(res.body.id)).status).toBe('sent');
    const [m] = await waitForMail(email);
    expect(m.subject).toBe('Template Remit Org: EUR 1234.50 of 2026-10-15?');
    expect(m.text).toBe(`Hello Vorlage Verlag GmbH, which of 8400001, 8400002 does ref ${tx.bank_reference} pay?`);
    expect(m.headers['reply-to']).toBe('ar@replies.remit.example');
  });

  it('refuses a debit (422), a deposit that is not a customer payment or already applied (409), another organization\'s (404); validates the body', async () => {
    const { partnerId } = await customer(org, 'Regel Rohr GmbH', [{ number: '8500001', amount: 400 }]);
    const debit = await deposit(org, { amount: '-20.00', counterparty_name: 'Regel Rohr GmbH' });
    const d = await ask(org, { bank_transaction_id: debit.id, partner_id: partnerId });
    expect(d.status).toBe(422);
    expect(d.body.errors[0]).toMatchObject({ loc: ['body', 'bank_transaction_id'], type: 'value_error.not_a_deposit' });

    const interest = await deposit(org, { amount: '3.10', remittance_information: 'Habenzinsen Q3' });
    const i = await ask(org, { bank_transaction_id: interest.id, partner_id: partnerId });
    expect(i.status).toBe(409);
    expect(i.body.detail).toContain('not a customer payment');

    const paid = await deposit(org, { amount: '400.00', counterparty_name: 'Regel Rohr GmbH', remittance_information: 'Rechnung 8500001' });
    const payments = await stack.request('GET', `/v2/payments?bank_transaction_id=${paid.id}`, { token: org.token });
    expect(payments.body.data).toHaveLength(1);
    // a proposal alone does not stop a request (it is a guess); an approved payment does
    expect((await stack.request('POST', `/v2/payments/${payments.body.data[0].id}/approve`, { token: org.token })).status).toBe(200);
    const applied = await ask(org, { bank_transaction_id: paid.id });
    expect(applied.status).toBe(409);
    expect(applied.body.detail).toContain(`approved payment ${payments.body.data[0].id}`);

    const theirs = await deposit(other, { amount: '10.00', counterparty_name: 'Regel Rohr GmbH' });
    const cross = await ask(org, { bank_transaction_id: theirs.id, partner_id: partnerId });
    expect(cross.status).toBe(404);
    expect(cross.body).toMatchObject({ type: 'entity-not-found' });
    expect((await ask(org, { bank_transaction_id: randomUUID() })).status).toBe(404);
    const missing = await ask(org, {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['body', 'bank_transaction_id']);
    expect((await ask(org, { bank_transaction_id: 'nope' })).status).toBe(422);
    expect(await stack.sql(`SELECT id FROM cash_app.outreach_records WHERE bank_transaction_id = ANY($1::uuid[])`, [[debit.id, interest.id, paid.id, theirs.id]])).toEqual([]);
  });

  it('a member asks only customers of their business units and sees only those requests', async () => {
    const o = await stack.onboard('Remit Units');
    const unit = async (name: string) => (await stack.request('POST', '/v2/business-units', { token: o.token, body: { name } })).body.id as string;
    const [north, south] = [await unit('North'), await unit('South')];
    const user = await stack.request('POST', '/v2/users', { token: o.token, body: { email: `south.${hex()}@units.example`, name: 'South', role: 'member', business_unit_ids: [south], permissions: [] } });
    expect(user.status, user.text).toBe(200);
    const { runCli } = await import('@rp/admin/cli');
    const member = { token: ((await runCli(['token', 'issue', '--org', o.organizationId, '--user', user.body.id], stack.env)) as { token: string }).token };
    const nord = await customer(o, 'Nord Nadel GmbH', [], { businessUnitId: north });
    const sued = await customer(o, 'Sued Seile GmbH', [], { businessUnitId: south });

    const northTx = await deposit(o, { amount: '70.00', counterparty_name: 'Nord Nadel GmbH' });
    const byName = await ask(member, { bank_transaction_id: northTx.id });
    expect(byName.status).toBe(422);
    expect(byName.body.errors[0].msg).toContain('not a customer within your business units');
    const named = await ask(member, { bank_transaction_id: northTx.id, partner_id: nord.partnerId });
    expect(named.body.errors[0]).toMatchObject({ loc: ['body', 'partner_id'], type: 'value_error.not_found' });

    // the admin's request to the northern customer: the member neither sees it nor gets it answered
    const asked = await ask(o, { bank_transaction_id: northTx.id });
    expect(asked.status).toBe(200);
    expect((await stack.request('GET', `/v2/cash-app/outreach/${asked.body.id}`, { token: member.token })).status).toBe(404);
    const again = await ask(member, { bank_transaction_id: northTx.id });
    expect(again.status).toBe(409);
    expect(again.text).not.toContain(asked.body.id);

    const southTx = await deposit(o, { amount: '80.00', counterparty_name: 'Sued Seile GmbH' });
    const mine = await ask(member, { bank_transaction_id: southTx.id });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.partner_id).toBe(sued.partnerId);
    const list = await stack.request('GET', '/v2/cash-app/outreach?outreach_type=remittance_request', { token: member.token });
    expect(list.body.data.map((r: any) => r.id)).toEqual([mine.body.id]);
    await result(asked.body.id);
    await result(mine.body.id);
  });

  it('records a failed send with its error and outreach.failed; a new request then sends it', async () => {
    const { email } = await customer(org, 'Fehler Feder GmbH', [{ number: '8600001', amount: 60 }]);
    const tx = await deposit(org, { amount: '61.00', counterparty_name: 'Fehler Feder GmbH' });
    await stack.workers['cash-app']!.close();
    const broken = await startServiceWorker(cashAppModule, loadCashAppConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${await deadSmtpPort()}` }), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    let failedId: string;
    try {
      const res = await ask(org, { bank_transaction_id: tx.id });
      expect(res.status, res.text).toBe(200);
      failedId = res.body.id;
      expect(await result(failedId)).toEqual({ status: 'failed', error: 'The email server could not be reached or did not accept the message.' });
      const handle = temporal.client.workflow.getHandle(remittanceRequestWorkflowId(failedId));
      await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'remittance-request-failed.json');
    } finally {
      await broken.close();
      await stack.startWorker('cash-app');
    }
    const got = await stack.request('GET', `/v2/cash-app/outreach/${failedId}`, { token: org.token });
    expect(got.body).toMatchObject({ status: 'failed', email_id: null, recipient: email, error: 'The email server could not be reached or did not accept the message.' });
    const [row] = await stack.sql('SELECT attempts FROM cash_app.outreach_records WHERE id = $1', [failedId]);
    expect(row.attempts).toBe(2);
    const failedEvents = await stack.request('GET', '/v2/events?type=outreach.failed&page_size=200', { token: org.token });
    expect(failedEvents.body.data.filter((e: any) => e.data.object.id === failedId)).toHaveLength(1);
    const failedList = await stack.request('GET', '/v2/cash-app/outreach?status=failed&outreach_type=remittance_request', { token: org.token });
    expect(failedList.body.data.map((r: any) => r.id)).toContain(failedId);

    const retry = await ask(org, { bank_transaction_id: tx.id });
    expect(retry.status).toBe(200);
    expect(retry.body.id).not.toBe(failedId);
    expect((await result(retry.body.id)).status).toBe('sent');
    expect(await waitForMail(email)).toHaveLength(1);
  });

  it('sends once when recording "sent" fails after the SMTP server accepted: only the recording is retried', async () => {
    const { email } = await customer(org, 'Schreib Fehler KG', [{ number: '8800001', amount: 40 }]);
    const tx = await deposit(org, { amount: '41.00', counterparty_name: 'Schreib Fehler KG' });
    const fault = await failUpdates(stack, {
      table: 'cash_app.outreach_records',
      when: `NEW.status = 'sent' AND OLD.status <> 'sent' AND NEW.bank_transaction_id = '${tx.id}'`,
      name: `fail_${tx.id.replace(/-/g, '_')}`,
      times: 2,
    });
    try {
      const res = await ask(org, { bank_transaction_id: tx.id });
      expect(res.status).toBe(200);
      expect(await result(res.body.id)).toMatchObject({ status: 'sent', messageId: `<${res.body.id}@receivables.local>` });
      expect(await fault.attempts()).toBeGreaterThanOrEqual(3);
      const [row] = await stack.sql('SELECT status, attempts FROM cash_app.outreach_records WHERE id = $1', [res.body.id]);
      expect(row).toMatchObject({ status: 'sent', attempts: 1 });
      await new Promise((r) => setTimeout(r, 500));
      expect(await waitForMail(email, { count: 2, timeoutMs: 1500 })).toHaveLength(1);
    } finally {
      await fault.restore();
    }
  });

  it('fails at once, without retries, when the SMTP server permanently rejects the recipient', async () => {
    const { email } = await customer(org, 'Abgelehnt Anker GmbH', [{ number: '8700001', amount: 30 }]);
    const tx = await deposit(org, { amount: '31.00', counterparty_name: 'Abgelehnt Anker GmbH' });
    const smtp = await rejectingSmtp();
    await stack.workers['cash-app']!.close();
    const rejecting = await startServiceWorker(cashAppModule, loadCashAppConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${smtp.port}` }), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    try {
      const res = await ask(org, { bank_transaction_id: tx.id });
      expect(await result(res.body.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/550/) });
      const [row] = await stack.sql('SELECT status, attempts, error, recipient FROM cash_app.outreach_records WHERE id = $1', [res.body.id]);
      // PAYMENT_RECEIPT_MAX_ATTEMPTS is 2 here: a 5xx answer is not retried
      expect(row).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/Mailbox unavailable/), recipient: email });
    } finally {
      await rejecting.close();
      await smtp.close();
      await stack.startWorker('cash-app');
    }
  });
});
