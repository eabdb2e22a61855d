/**
 * Payment receipts end to end: requested through the gateway, sent by the payment-receipt workflow
 * through a real SMTP sink (MailDev). SQL set-up, where used, stands for states no endpoint
 * produces directly: an approved payment of a fixed shape (see `payment`), an orphaned `pending`
 * record (the API stopping between writing it and starting its workflow), a previous receipt
 * workflow that never closes (started on a task queue no worker polls), and a write failure of the
 * "sent" record (a trigger), standing for a database outage right after the SMTP server accepted. A
 * delivery attempt that ends after the SMTP server accepted (a killed worker's) is reproduced with an
 * SMTP gate and Temporal's fail-by-id (test/support/smtp-gate.ts).
 * The organization's receipt template is set up through the API (/v1/email-template-folders,
 * /v1/email-templates) only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectTemporal, startServiceWorker, type TemporalHandle } from '@rp/platform';
import { cashAppModule, loadCashAppConfig } from '@rp/cash-app';
import { workflowsPath } from '@rp/workflows/paths';
import { ENTITY_ID, ORGANIZATION_ID, paymentReceipt, paymentReceiptWorkflowId, TASK_QUEUES } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { replayHistory } from './support/histories.js';
import { failUpdates } from './support/faults.js';
import { failRunningAttempt, rejectingSmtp, smtpGate, startOneSlotWorker } from './support/smtp-gate.js';

let stack: TestStack;
let org: Org;
let other: Org;
let temporal: TemporalHandle;
const RETRY_ENV = { PAYMENT_RECEIPT_MAX_ATTEMPTS: '2', PAYMENT_RECEIPT_RETRY_SECONDS: '1' };

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'], env: RETRY_ENV });
  org = await stack.onboard('Receipt Org');
  other = await stack.onboard('Other Org');
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
});
afterAll(async () => {
  await temporal?.close();
  await stack?.close();
});

/** A customer (pushed like the middleware does) with its invoices; returns the partner and invoice ids. */
async function customerWithInvoices(o: Org, email: string, invoices: { number: string; amount: number; currency?: string }[]) {
  const code = `C-${randomBytes(3).toString('hex')}`;
  const c = await pushCustomers(stack, o.apiKey, [customerRecord({ customer_code: code, name1: 'Acme Handels GmbH', smtp_addr: email })]);
  expect(c.body.results[0].success).toBe(true);
  const pushed = await pushInvoices(
    stack,
    o.apiKey,
    invoices.map((i) => invoiceRecord({ customer_code: code, document_number: i.number, reference: `INV-${i.number}`, amount_in_document_currency: i.amount, ...(i.currency ? { currency: i.currency } : {}) })),
  );
  expect(pushed.body.results.every((r) => r.success)).toBe(true);
  return { partnerId: c.body.results[0].service_id!, invoiceIds: pushed.body.results.map((r) => r.service_id!) };
}

/**
 * An approved payment for a deposit: bank statement, transaction, payment and allocations written
 * with SQL, standing in for statement processing and approval (a fixed payment is what the receipt
 * needs; a payment without a customer cannot be approved through the API).
 */
async function payment(o: Org, p: { partnerId: string | null; amount: string; date: string; currency?: string; allocations: { invoiceId: string; paid: string; discount?: string }[] }) {
  const [st] = await stack.sql(`INSERT INTO cash_app.bank_statements (id, organization_id, format, status) VALUES (gen_random_uuid(), $1, 'json', 'ready') RETURNING id`, [
    o.organizationId,
  ]);
  const [tx] = await stack.sql(
    `INSERT INTO cash_app.bank_transactions (id, organization_id, statement_id, unique_import_id, sequence, amount, currency, booking_date, value_date, bank_reference, counterparty_name)
     VALUES (gen_random_uuid(), $1, $2, gen_random_uuid()::text, 1, $3, $5, $4, $4, 'BANKREF-77', 'ACME HANDELS') RETURNING id`,
    [o.organizationId, st.id, p.amount, p.date, p.currency ?? 'EUR'],
  );
  const [pay] = await stack.sql(
    `INSERT INTO cash_app.payments (id, organization_id, bank_transaction_id, partner_id, amount, currency, payment_date, status, approved_at)
     VALUES (gen_random_uuid(), $1, $2, $3, $4, $6, $5, 'approved', now()) RETURNING id`,
    [o.organizationId, tx.id, p.partnerId, p.amount, p.date, p.currency ?? 'EUR'],
  );
  for (const a of p.allocations) {
    await stack.sql(
      `INSERT INTO cash_app.payment_allocations (id, organization_id, payment_id, invoice_id, amount_paid, amount_discount) VALUES (gen_random_uuid(), $1, $2, $3, $4, $5)`,
      [o.organizationId, pay.id, a.invoiceId, a.paid, a.discount ?? '0'],
    );
  }
  return { paymentId: pay.id as string, transactionId: tx.id as string };
}

const requestReceipt = (o: Org, paymentId: string) => stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: o.token, body: { payment_id: paymentId } });

async function deadSmtpPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

describe('payment-receipt email with the organization\'s template', () => {
  it('renders the default template of the "Payment receipts" folder with the receipt\'s values; without one (or only a non-default), the built-in receipt', async () => {
    const tpl = await stack.onboard('Template Org');
    const admin = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: tpl.token, body });
    const receiptOf = async (email: string, numbers: [string, string]) => {
      const { partnerId, invoiceIds } = await customerWithInvoices(tpl, email, [
        { number: numbers[0], amount: 1190 },
        { number: numbers[1], amount: 595 },
      ]);
      const { paymentId } = await payment(tpl, {
        partnerId,
        amount: '1761.20',
        date: '2026-10-02',
        allocations: [
          { invoiceId: invoiceIds[0], paid: '1166.20', discount: '23.80' },
          { invoiceId: invoiceIds[1], paid: '595.00' },
        ],
      });
      expect((await requestReceipt(tpl, paymentId)).status).toBe(200);
      const result = await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
      expect(result.status).toBe('sent');
      const mails = await waitForMail(email);
      expect(mails).toHaveLength(1);
      return mails[0];
    };

    // a folder of that name whose only template is not the default: built-in receipt
    const folder = await admin('POST', '/v1/email-template-folders', { name: 'Payment receipts' });
    expect(folder.status, folder.text).toBe(200);
    const plain = await admin('POST', '/v1/email-templates', { folder_id: folder.body.id, name: 'Draft', subject: 'Draft {{ payment.amount }}', body: 'Draft' });
    expect(plain.status, plain.text).toBe(200);
    const builtIn = await receiptOf(`ap.${randomBytes(4).toString('hex')}@acme.example`, ['9200001', '9200002']);
    expect(builtIn.subject).toBe('Payment received: EUR 1,761.20 on 2026-10-02');
    expect(builtIn.text).toContain('Dear Acme Handels GmbH,');

    // the folder's default template: its subject and body, rendered with the receipt's variables
    const def = await admin('POST', '/v1/email-templates', {
      folder_id: folder.body.id,
      name: 'Receipt',
      is_default: true,
      subject: 'Thanks {{ customer.name }}: {{ payment.currency }} {{ payment.amount }} received',
      body:
        'Hello {{ customer.name }} <b>,\n{{ organization.name }} received {{ payment.amount }} {{ payment.currency }} on {{ payment.date }} (ref {{ payment.reference }}).\n' +
        'Paid: {% for invoice in invoices %}{{ invoice.number }}/{{ invoice.amount }}{% unless forloop.last %}, {% endunless %}{% endfor %} ({{ invoices.size }} invoices)',
    });
    expect(def.status, def.text).toBe(200);
    const email = `ap.${randomBytes(4).toString('hex')}@acme.example`;
    const mail = await receiptOf(email, ['9300001', '9300002']);
    expect(mail.subject).toBe('Thanks Acme Handels GmbH: EUR 1761.20 received');
    expect(mail.text).toBe(
      'Hello Acme Handels GmbH <b>,\nTemplate Org received 1761.20 EUR on 2026-10-02 (ref BANKREF-77).\nPaid: 9300001/1190.00, 9300002/595.00 (2 invoices)',
    );
    // the HTML part is the text, escaped
    expect(mail.html).toContain('Hello Acme Handels GmbH &lt;b&gt;,<br>');
    expect(mail.html).not.toContain('<b>');
  });

  it('shows the totals of the paid invoices per currency in that currency\'s minor units (JPY without decimals), never summed across currencies', async () => {
    const tpl = await stack.onboard('Receipt FX Org'); // base currency EUR
    const admin = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: tpl.token, body });
    const folder = await admin('POST', '/v1/email-template-folders', { name: 'Payment receipts' });
    expect(folder.status, folder.text).toBe(200);
    const oneFigure = await admin('POST', '/v1/email-templates', {
      folder_id: folder.body.id,
      name: 'Receipt',
      is_default: true,
      subject: 'Received {{ payment.amount }} {{ payment.currency }}',
      body: 'Still open: {{ totals.open_amount }} {{ totals.currency }}; {% for invoice in invoices %}{{ invoice.number }} {{ invoice.amount_open }}; {% endfor %}',
    });
    expect(oneFigure.status, oneFigure.text).toBe(200);
    const receiptOf = async (invoices: { number: string; amount: number; currency: string }[], p: { amount: string; currency: string; paid: string[] }) => {
      const email = `ap.${randomBytes(4).toString('hex')}@acme.example`;
      const { partnerId, invoiceIds } = await customerWithInvoices(tpl, email, invoices);
      const { paymentId } = await payment(tpl, { partnerId, amount: p.amount, currency: p.currency, date: '2026-10-02', allocations: invoiceIds.map((invoiceId, i) => ({ invoiceId, paid: p.paid[i]! })) });
      expect((await requestReceipt(tpl, paymentId)).status).toBe(200);
      const result = await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
      expect(result.status).toBe('sent');
      const mails = await waitForMail(email);
      expect(mails).toHaveLength(1);
      return mails[0];
    };
    // JPY has no minor unit: its amounts carry no decimals ("17500", not "17500.00")
    const jpy = await receiptOf(
      [
        { number: '9400001', amount: 15000, currency: 'JPY' },
        { number: '9400002', amount: 2500, currency: 'JPY' },
      ],
      { amount: '17500', currency: 'JPY', paid: ['15000', '2500'] },
    );
    expect(jpy.subject).toBe('Received 17500 JPY');
    expect(jpy.text).toBe('Still open: 17500 JPY; 9400001 15000; 9400002 2500; ');

    // A payment applied to an EUR and a JPY invoice (a state no endpoint produces; SQL, see the header):
    // no rate, so no one figure; per currency instead.
    const perCurrency = await admin('PATCH', `/v1/email-templates/${oneFigure.body.id}`, {
      body: 'Still open: {{ totals.open_amount }} {{ totals.currency }}; {% for c in totals.by_currency %}{{ c.currency }} {{ c.open_amount }}; {% endfor %}complete={{ totals.base.complete }}',
    });
    expect(perCurrency.status, perCurrency.text).toBe(200);
    const mixed = await receiptOf(
      [
        { number: '9500001', amount: 100, currency: 'EUR' },
        { number: '9500002', amount: 2500, currency: 'JPY' },
      ],
      // the database refuses allocations whose cash exceeds the payment's amount, so the deposit covers both
      { amount: '100.01', currency: 'EUR', paid: ['100.00', '0.01'] },
    );
    expect(mixed.text).toBe('Still open:  ; EUR 100.00; JPY 2500; complete=false');
  });
});

describe('payment-receipt email', () => {
  it('emails the receipt through Temporal and SMTP once, and records it as sent', async () => {
    const email = `ap.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [
      { number: '9100001', amount: 1190 },
      { number: '9100002', amount: 595 },
    ]);
    const { paymentId, transactionId } = await payment(org, {
      partnerId,
      amount: '1761.20',
      date: '2026-10-02',
      allocations: [
        { invoiceId: invoiceIds[0], paid: '1166.20', discount: '23.80' },
        { invoiceId: invoiceIds[1], paid: '595.00' },
      ],
    });

    const res = await requestReceipt(org, paymentId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'outreach_record',
      outreach_type: 'payment_receipt',
      status: 'pending',
      payment_id: paymentId,
      partner_id: partnerId,
      bank_transaction_id: transactionId,
      email_id: null,
      skip_reason: null,
    });
    const recordId = res.body.id;

    const handle = temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId));
    expect(await handle.result()).toEqual({ status: 'sent', emailId: `<${recordId}@receivables.local>` });
    const description = await handle.describe();
    expect(description.taskQueue).toBe(TASK_QUEUES.cashApp);
    expect(description.typedSearchAttributes.get(ORGANIZATION_ID)).toBe(org.organizationId);
    expect(description.typedSearchAttributes.get(ENTITY_ID)).toBe(paymentId);

    const history = await handle.fetchHistory();
    await replayHistory(stack, description.workflowId, history, 'payment-receipt-recorded-email.json');

    const mails = await waitForMail(email);
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toBe('Payment received: EUR 1,761.20 on 2026-10-02');
    expect(mails[0].messageId).toBe(`${recordId}@receivables.local`);
    expect(mails[0].text).toContain('Dear Acme Handels GmbH,');
    expect(mails[0].text).toContain('Receipt Org has received EUR 1,761.20 on 2026-10-02.');
    expect(mails[0].text).toContain('Invoice 9100001: EUR 1,166.20 (discount EUR 23.80)');
    expect(mails[0].text).toContain('Invoice 9100002: EUR 595.00');
    expect(mails[0].text).toContain('Bank reference: BANKREF-77');
    expect(mails[0].html).toContain('<td>9100001</td><td style="text-align:right">EUR 1,166.20</td>');

    const got = await stack.request('GET', `/v2/cash-app/outreach/${recordId}`, { token: org.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: recordId, status: 'sent', email_id: `<${recordId}@receivables.local>`, recipient: email, error: null });
    expect(got.body.sent_at).toMatch(/Z$/);
    const [row] = await stack.sql('SELECT attempts FROM cash_app.outreach_records WHERE id = $1', [recordId]);
    expect(row.attempts).toBe(1);

    // Asking again while a receipt is sent returns that record and sends nothing.
    const again = await requestReceipt(org, paymentId);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: recordId, status: 'sent' });

    // Re-running the workflow (an operator's re-run, a retry) does not send a second email.
    const rerun = await temporal.client.workflow.execute(paymentReceipt, {
      taskQueue: TASK_QUEUES.cashApp,
      workflowId: `${paymentReceiptWorkflowId(paymentId)}-rerun`,
      args: [{ organizationId: org.organizationId, outreachId: recordId, paymentId, retry: { maximumAttempts: 2, initialIntervalSeconds: 1 } }],
    });
    expect(rerun).toEqual({ status: 'already-sent', emailId: `<${recordId}@receivables.local>` });
    await new Promise((r) => setTimeout(r, 500));
    expect(await waitForMail(email, { count: 2, timeoutMs: 1000 })).toHaveLength(1);
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM cash_app.outreach_records WHERE payment_id = $1`, [paymentId]);
    expect(n).toBe(1);
  });

  it('sends the receipt of a payment that statement processing proposed', async () => {
    const email = `ap.real.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9500001', amount: 1190 }]);
    const upload = await stack.request('POST', '/v2/bank-statements', {
      token: org.token,
      body: {
        account: 'DE44500105175407324931',
        currency: 'EUR',
        statement_number: `S-${randomUUID()}`,
        transactions: [
          {
            amount: '1190.00',
            booking_date: '2026-10-15',
            value_date: '2026-10-15',
            counterparty_name: 'Acme Handels GmbH',
            remittance_information: 'Rechnung 9500001',
            bank_reference: 'REF-REAL-1',
          },
        ],
      },
    });
    expect(upload.status).toBe(200);
    const txId = (await waitForStatement(stack, org.token, upload.body.id)).transactions[0].id as string;
    const payments = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
    expect(payments.body.data).toHaveLength(1);
    const proposed = payments.body.data[0];
    expect(proposed.partner_id).toBe(partnerId);
    expect(proposed.status).toBe('unapproved');

    // A proposal is a guess about who paid what: no receipt until a person approved it.
    const early = await requestReceipt(org, proposed.id);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ type: 'conflict', status: 409, detail: expect.stringContaining('is not approved') });
    expect(await stack.sql('SELECT id FROM cash_app.outreach_records WHERE payment_id = $1', [proposed.id])).toEqual([]);
    expect(await waitForMail(email, { timeoutMs: 500 })).toHaveLength(0);

    expect((await stack.request('POST', `/v2/payments/${proposed.id}/approve`, { token: org.token })).status).toBe(200);
    const res = await requestReceipt(org, proposed.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'pending', payment_id: proposed.id, partner_id: partnerId, bank_transaction_id: txId });
    expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(proposed.id)).result()).toMatchObject({ status: 'sent' });
    const mails = await waitForMail(email);
    expect(mails).toHaveLength(1);
    expect(mails[0].subject).toBe('Payment received: EUR 1,190.00 on 2026-10-15');
    expect(mails[0].text).toContain('Invoice 9500001: EUR 1,190.00');
    expect(mails[0].text).toContain('Bank reference: REF-REAL-1');
    expect(invoiceIds).toHaveLength(1);
  });

  it('makes one receipt of concurrent requests for the same payment', async () => {
    const email = `ap.race.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9600001', amount: 42 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '42.00', date: '2026-10-06', allocations: [{ invoiceId: invoiceIds[0], paid: '42.00' }] });
    const results = await Promise.all(Array.from({ length: 4 }, () => requestReceipt(org, paymentId)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
    const [{ n }] = await stack.sql('SELECT count(*)::int AS n FROM cash_app.outreach_records WHERE payment_id = $1', [paymentId]);
    expect(n).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(await waitForMail(email, { count: 2, timeoutMs: 1000 })).toHaveLength(1);
  });

  it('replaces a still-running workflow of the payment\'s closed previous receipt before answering, and sends the new receipt', async () => {
    const email = `ap.stuck.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9710001', amount: 64 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '64.00', date: '2026-10-09', allocations: [{ invoiceId: invoiceIds[0], paid: '64.00' }] });
    // A previous receipt, already failed, whose workflow is still open (no worker polls its task queue).
    const [previous] = await stack.sql(
      `INSERT INTO cash_app.outreach_records (id, organization_id, outreach_type, status, error, payment_id, partner_id)
       VALUES (gen_random_uuid(), $1, 'payment_receipt', 'failed', 'SMTP down', $2, $3) RETURNING id`,
      [org.organizationId, paymentId, partnerId],
    );
    const stuck = await temporal.client.workflow.start(paymentReceipt, {
      taskQueue: 'nobody-polls-this-queue',
      workflowId: paymentReceiptWorkflowId(paymentId),
      args: [{ organizationId: org.organizationId, outreachId: previous.id, paymentId, retry: { maximumAttempts: 1, initialIntervalSeconds: 1 } }],
      memo: { outreachId: previous.id },
    });

    // Concurrent requests: one new record, whose workflow replaces the old run (the loser of the start finds it).
    const results = await Promise.all(Array.from({ length: 3 }, () => requestReceipt(org, paymentId)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const res = results[0]!;
    expect(res.body).toMatchObject({ status: 'pending', payment_id: paymentId });
    expect(res.body.id).not.toBe(previous.id);
    // When the answers arrive the new record's workflow already runs (nothing is left to a promise in the API
    // process, which may stop): the old run was terminated by the requests, not by anyone else.
    // (Before: the request waited 3 s, answered, and left the start to a background poll of up to 10 minutes.)
    const handle = temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId));
    const current = await handle.describe();
    expect(current.memo?.outreachId).toBe(res.body.id);
    expect(current.runId).not.toBe(stuck.firstExecutionRunId);
    expect((await temporal.client.workflow.getHandle(stuck.workflowId, stuck.firstExecutionRunId).describe()).status.name).toBe('TERMINATED');
    // Asking again answers the same record and leaves its workflow alone.
    const again = await requestReceipt(org, paymentId);
    expect(again.body).toMatchObject({ id: res.body.id });
    expect((await handle.describe()).runId).toBe(current.runId);

    expect(await handle.result()).toEqual({ status: 'sent', emailId: `<${res.body.id}@receivables.local>` });
    expect(await waitForMail(email)).toHaveLength(1);
    const [old] = await stack.sql('SELECT status FROM cash_app.outreach_records WHERE id = $1', [previous.id]);
    expect(old.status).toBe('failed');
  });

  it('sends once when recording "sent" fails after the SMTP server accepted: only the recording is retried', async () => {
    const email = `ap.write.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9720001', amount: 81 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '81.00', date: '2026-10-10', allocations: [{ invoiceId: invoiceIds[0], paid: '81.00' }] });
    // The database refuses the first two "sent" updates of this payment's record, as an outage right
    // after the SMTP call would.
    const fault = await failUpdates(stack, {
      table: 'cash_app.outreach_records',
      when: `NEW.status = 'sent' AND OLD.status <> 'sent' AND NEW.payment_id = '${paymentId}'`,
      name: `fail_${paymentId.replace(/-/g, '_')}`,
      times: 2,
    });
    try {
      const res = await requestReceipt(org, paymentId);
      expect(res.status).toBe(200);
      const handle = temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId));
      expect(await handle.result()).toEqual({ status: 'sent', emailId: `<${res.body.id}@receivables.local>` });
      expect(await fault.attempts()).toBeGreaterThanOrEqual(3); // the two injected failures happened, then the record was written
      const [row] = await stack.sql('SELECT status, attempts, email_id FROM cash_app.outreach_records WHERE id = $1', [res.body.id]);
      expect(row).toMatchObject({ status: 'sent', attempts: 1, email_id: `<${res.body.id}@receivables.local>` });
      // Before: each failed write failed the send activity, which sent again on retry (three emails).
      await new Promise((r) => setTimeout(r, 500));
      expect(await waitForMail(email, { count: 2, timeoutMs: 1500 })).toHaveLength(1);
    } finally {
      await fault.restore();
    }
  });

  it('sends once when the worker dies after the SMTP server accepted, before the delivery activity reported', async () => {
    // The chaos suite's duplicate receipt (fixed in e3eb927, now through the kernel's sendRecordedEmail):
    // the retried delivery attempt finds the record sent and sends nothing.
    const email = `ap.killed.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9725001', amount: 64 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '64.00', date: '2026-10-10', allocations: [{ invoiceId: invoiceIds[0], paid: '64.00' }] });
    const gate = await smtpGate(inject('smtpUrl'));
    await stack.workers['cash-app']!.close();
    const worker = await startOneSlotWorker(stack, 'cash-app', gate.url);
    try {
      const accepted = gate.holdNextAcceptance(email);
      const res = await requestReceipt(org, paymentId);
      expect(res.status).toBe(200);
      await accepted; // MailDev has the receipt; the worker waits for the answer
      expect(await failRunningAttempt(temporal, stack.namespace, paymentReceiptWorkflowId(paymentId), 'deliverRecordedEmail')).toBe(1);
      gate.release();
      expect(['sent', 'already-sent']).toContain((await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result()).status);
      const [row] = await stack.sql('SELECT status, attempts, email_id FROM cash_app.outreach_records WHERE id = $1', [res.body.id]);
      expect(row).toMatchObject({ status: 'sent', attempts: 1, email_id: `<${res.body.id}@receivables.local>` });
      const mails = await waitForMail(email, { count: 2, timeoutMs: 1500 });
      expect(mails).toHaveLength(1);
      expect(`<${mails[0].messageId}>`).toBe(row.email_id);
    } finally {
      gate.release();
      await worker.close();
      await gate.close();
      await stack.startWorker('cash-app');
    }
  });

  it('the workflow itself sends nothing for a payment that is not approved', async () => {
    // The API refuses such a receipt; this pending record for an unapproved payment (SQL) stands for one requested
    // before that rule, or a payment whose approval was taken back.
    const email = `ap.unapproved.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9730001', amount: 19 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '19.00', date: '2026-10-11', allocations: [{ invoiceId: invoiceIds[0], paid: '19.00' }] });
    await stack.sql(`UPDATE cash_app.payments SET status = 'unapproved', approved_at = NULL WHERE id = $1`, [paymentId]);
    const [record] = await stack.sql(
      `INSERT INTO cash_app.outreach_records (id, organization_id, outreach_type, status, payment_id, partner_id)
       VALUES (gen_random_uuid(), $1, 'payment_receipt', 'pending', $2, $3) RETURNING id`,
      [org.organizationId, paymentId, partnerId],
    );
    const result = await temporal.client.workflow.execute(paymentReceipt, {
      taskQueue: TASK_QUEUES.cashApp,
      workflowId: paymentReceiptWorkflowId(paymentId),
      args: [{ organizationId: org.organizationId, outreachId: record.id, paymentId, retry: { maximumAttempts: 2, initialIntervalSeconds: 1 } }],
    });
    expect(result).toEqual({ status: 'skipped', reason: 'the payment is not approved' });
    const got = await stack.request('GET', `/v2/cash-app/outreach/${record.id}`, { token: org.token });
    expect(got.body).toMatchObject({ status: 'skipped', skip_reason: 'the payment is not approved', recipient: null });
    expect(await waitForMail(email, { timeoutMs: 500 })).toHaveLength(0);
  });

  it('starts again a pending receipt whose workflow never ran', async () => {
    const email = `ap.orphan.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9700001', amount: 77 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '77.00', date: '2026-10-07', allocations: [{ invoiceId: invoiceIds[0], paid: '77.00' }] });
    // As if the API stopped right after writing the record, before starting the workflow.
    const [orphan] = await stack.sql(
      `INSERT INTO cash_app.outreach_records (id, organization_id, outreach_type, status, payment_id, partner_id)
       VALUES (gen_random_uuid(), $1, 'payment_receipt', 'pending', $2, $3) RETURNING id`,
      [org.organizationId, paymentId, partnerId],
    );
    const res = await requestReceipt(org, paymentId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: orphan.id, status: 'pending' });
    expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result()).toEqual({ status: 'sent', emailId: `<${orphan.id}@receivables.local>` });
    expect(await waitForMail(email)).toHaveLength(1);
  });

  it('skips a customer without an email address and a payment without a customer; a skipped receipt can be asked again', async () => {
    const { partnerId, invoiceIds } = await customerWithInvoices(org, '', [{ number: '9200001', amount: 100 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '100.00', date: '2026-10-03', allocations: [{ invoiceId: invoiceIds[0], paid: '100.00' }] });
    const res = await requestReceipt(org, paymentId);
    expect(res.status).toBe(200);
    const result = await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
    expect(result).toEqual({ status: 'skipped', reason: 'no recipient: the customer has no email address' });
    const got = await stack.request('GET', `/v2/cash-app/outreach/${res.body.id}`, { token: org.token });
    expect(got.body).toMatchObject({ status: 'skipped', skip_reason: 'no recipient: the customer has no email address', email_id: null });

    const unassigned = await payment(org, { partnerId: null, amount: '50.00', date: '2026-10-03', allocations: [] });
    const res2 = await requestReceipt(org, unassigned.paymentId);
    expect(res2.body).toMatchObject({ status: 'pending', partner_id: null });
    expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(unassigned.paymentId)).result()).toEqual({
      status: 'skipped',
      reason: 'no recipient: the payment has no customer',
    });

    // After a skip, a new request makes a new record (the customer may have an address by now).
    const retry = await requestReceipt(org, paymentId);
    expect(retry.status).toBe(200);
    expect(retry.body.id).not.toBe(res.body.id);
    expect(retry.body.status).toBe('pending');
    await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
    const list = await stack.request('GET', `/v2/cash-app/outreach?payment_id=${paymentId}`, { token: org.token });
    expect(list.body.total_records).toBe(2);
    expect(list.body.data.map((r: any) => r.id)).toEqual([retry.body.id, res.body.id]);
  });

  it('marks the receipt failed after the configured SMTP retries, and a new request then sends it', async () => {
    const email = `ap.fail.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9300001', amount: 250 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '250.00', date: '2026-10-04', allocations: [{ invoiceId: invoiceIds[0], paid: '250.00' }] });

    await stack.workers['cash-app']!.close();
    const broken = await startServiceWorker(cashAppModule, loadCashAppConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${await deadSmtpPort()}` }), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    let failedId: string;
    try {
      const res = await requestReceipt(org, paymentId);
      failedId = res.body.id;
      const handle = temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId));
      // Users read the error: what failed, in words, never the SMTP server's internal address.
      expect(await handle.result()).toMatchObject({ status: 'failed', error: 'The email server could not be reached or did not accept the message.' });
      // The failure path (retries exhausted, record marked failed) replays too.
      await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'payment-receipt-failed-recorded-email.json');
    } finally {
      await broken.close();
      await stack.startWorker('cash-app');
    }
    const got = await stack.request('GET', `/v2/cash-app/outreach/${failedId}`, { token: org.token });
    expect(got.body).toMatchObject({ status: 'failed', email_id: null, recipient: email, error: 'The email server could not be reached or did not accept the message.' });
    expect(got.body.error).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    const [row] = await stack.sql('SELECT attempts FROM cash_app.outreach_records WHERE id = $1', [failedId]);
    expect(row.attempts).toBe(2);
    expect(await waitForMail(email, { timeoutMs: 500 })).toHaveLength(0);

    const failedList = await stack.request('GET', '/v2/cash-app/outreach?status=failed&outreach_type=payment_receipt', { token: org.token });
    expect(failedList.body.data.map((r: any) => r.id)).toContain(failedId);

    const retry = await requestReceipt(org, paymentId);
    expect(retry.body.id).not.toBe(failedId);
    expect(await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result()).toMatchObject({ status: 'sent' });
    expect(await waitForMail(email)).toHaveLength(1);
  });

  it('fails at once, without retries, when the SMTP server permanently rejects the recipient', async () => {
    const email = `ap.gone.${randomBytes(4).toString('hex')}@acme.example`;
    const { partnerId, invoiceIds } = await customerWithInvoices(org, email, [{ number: '9800001', amount: 12 }]);
    const { paymentId } = await payment(org, { partnerId, amount: '12.00', date: '2026-10-08', allocations: [{ invoiceId: invoiceIds[0], paid: '12.00' }] });
    const smtp = await rejectingSmtp();
    await stack.workers['cash-app']!.close();
    const rejecting = await startServiceWorker(cashAppModule, loadCashAppConfig({ ...stack.env, SMTP_URL: `smtp://127.0.0.1:${smtp.port}` }), {
      workflowsPath,
      workflowBundlePath: inject('workflowBundlePath'),
    });
    try {
      const res = await requestReceipt(org, paymentId);
      const result = await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(paymentId)).result();
      expect(result).toMatchObject({ status: 'failed', error: expect.stringMatching(/550/) });
      const [row] = await stack.sql('SELECT status, attempts, error FROM cash_app.outreach_records WHERE id = $1', [res.body.id]);
      // PAYMENT_RECEIPT_MAX_ATTEMPTS is 2 here: a 5xx answer is not retried.
      expect(row).toMatchObject({ status: 'failed', attempts: 1, error: expect.stringMatching(/Mailbox unavailable/) });
    } finally {
      await rejecting.close();
      await smtp.close();
      await stack.startWorker('cash-app');
    }
  });

  it('answers 404 for an unknown or another organization\'s payment or record, and validates the body', async () => {
    const unknown = await requestReceipt(org, randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ type: 'entity-not-found', title: 'Entity not found' });
    expect((await requestReceipt(org, 'not-a-uuid')).status).toBe(422); // ids are validated as ids

    const { partnerId, invoiceIds } = await customerWithInvoices(other, `ap.other.${randomBytes(3).toString('hex')}@acme.example`, [{ number: '9400001', amount: 10 }]);
    const theirs = await payment(other, { partnerId, amount: '10.00', date: '2026-10-05', allocations: [{ invoiceId: invoiceIds[0], paid: '10.00' }] });
    const cross = await requestReceipt(org, theirs.paymentId);
    expect(cross.status).toBe(404);
    const [{ n }] = await stack.sql('SELECT count(*)::int AS n FROM cash_app.outreach_records WHERE payment_id = $1', [theirs.paymentId]);
    expect(n).toBe(0);

    const mine = await requestReceipt(other, theirs.paymentId);
    expect(mine.status).toBe(200);
    await temporal.client.workflow.getHandle(paymentReceiptWorkflowId(theirs.paymentId)).result();
    expect((await stack.request('GET', `/v2/cash-app/outreach/${mine.body.id}`, { token: org.token })).status).toBe(404);
    expect((await stack.request('GET', '/v2/cash-app/outreach/nope', { token: org.token })).status).toBe(422); // ids are validated as ids
    const listOrg = await stack.request('GET', '/v2/cash-app/outreach?page_size=500', { token: org.token });
    expect(listOrg.body.data.map((r: any) => r.id)).not.toContain(mine.body.id);

    const missing = await stack.request('POST', '/v2/cash-app/outreach/payment-receipt', { token: org.token, body: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.errors[0].loc).toEqual(['body', 'payment_id']);
    const badFilter = await stack.request('GET', '/v2/cash-app/outreach?status=lost', { token: org.token });
    expect(badFilter.status).toBe(422);
    expect(badFilter.body.errors[0].loc).toEqual(['query', 'status']);
  });
});
