/**
 * Remittance advice arriving in the AR inbox, end to end: a customer emails a PDF advice over SMTP
 * (nodemailer) to the organization's inbound host; the inbox workflow (admin worker) parses it,
 * stores the PDF as its own object, matches the customer, and hands the message to cash-app's
 * recordInboundRemittances on cash-app's task queue (cash-app worker); the remittance is a result of
 * the message, carries the message summary, and the deposit that was waiting for it is matched.
 * A reply to a remittance request threads back to its deposit: the advice in it pays that deposit.
 * Everything is reached and read through the gateway (ledger by the middleware push, the deposit by
 * a bank statement upload, the remittance request by its route; its email arrives in MailDev).
 */
import { randomUUID } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal } from '@rp/platform';
import { inboxMessageWorkflowId } from '@rp/workflows';
import { waitForStatement } from './support/cash.js';
import { replayHistory } from './support/histories.js';
import { compose, receive } from './support/inbox.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let partnerId: string;
const invoiceIds: Record<string, string> = {};

async function deposit(amount: string, name: string, info: string | null): Promise<string> {
  const st = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: [{ amount, booking_date: '2026-10-15', value_date: '2026-10-15', counterparty_name: name, remittance_information: info }],
    },
  });
  expect(st.status, st.text).toBe(200);
  const ready = await waitForStatement(stack, org.token, st.body.id as string);
  const txId = (ready.transactions as { id: string }[])[0]!.id;
  expect((await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token })).body.data).toEqual([]);
  return txId;
}

async function advicePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const rows: [number, string][][] = [
    [[40, 'Nordlicht Handel GmbH - Zahlungsavis']],
    [[40, 'Zahlungsdatum: 14.10.2026'], [300, 'Zahlungsreferenz: AV-NL-7781']],
    [[40, 'Rechnungsnr.'], [160, 'Rechnungsbetrag'], [300, 'Zahlbetrag']],
    [[40, '7781001'], [160, '1.190,00'], [300, '1.190,00']],
    [[40, '7781002'], [160, '595,00'], [300, '595,00']],
    [[40, 'Summe'], [300, '1.785,00']],
  ];
  rows.forEach((row, i) => row.forEach(([x, text]) => page.drawText(text, { x, y: 800 - i * 16, size: 9, font })));
  return doc.save();
}

beforeAll(async () => {
  stack = await startStack({ workers: ['admin', 'cash-app'] });
  org = await stack.onboard('Inbox Remittance Org');
  const customers = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'NL-1', name1: 'Nordlicht Handel GmbH', smtp_addr: 'buchhaltung@nordlicht.example' })]);
  expect(customers.body.results[0]?.success, customers.text).toBe(true);
  partnerId = customers.body.results[0]!.service_id!;
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '7781001', reference: 'INV-7781001', customer_code: 'NL-1', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '7781002', reference: 'INV-7781002', customer_code: 'NL-1', amount_in_document_currency: 595 }),
    invoiceRecord({ document_number: '7781003', reference: 'INV-7781003', customer_code: 'NL-1', amount_in_document_currency: 500 }),
  ]);
  expect(invoices.body.results.every((r) => r.success), invoices.text).toBe(true);
  for (const r of invoices.body.results) invoiceIds[r.remote_id!] = r.service_id!;
});

afterAll(async () => {
  await stack?.close();
});

describe('remittance advice in the inbox', () => {
  it('a PDF advice emailed by the customer becomes a remittance of the message and lets the waiting deposit match', async () => {
    // the deposit arrives first, with nothing the matching engine can tie to an invoice or payer
    const txId = await deposit('1785.00', 'NL Zahlungsdienst', 'Sammelzahlung AV-NL-7781');

    const pdf = await advicePdf();
    const raw = await compose({
      from: 'Buchhaltung Nordlicht <buchhaltung@nordlicht.example>',
      to: 'ar@inbound.example',
      subject: 'Zahlungsavis AV-NL-7781',
      messageId: `<avis-${randomUUID()}@nordlicht.example>`,
      text: 'Sehr geehrte Damen und Herren,\n\nanbei unser Zahlungsavis.\n\nMit freundlichen Grüßen\nNordlicht Handel GmbH',
      attachments: [{ filename: 'Zahlungsavis.pdf', content: Buffer.from(pdf), contentType: 'application/pdf' }],
    });
    const m = await receive(stack, org, raw, 120_000);
    expect(m).toMatchObject({ processing_state: 'processed', partner_id: partnerId, category: 'remittance' });
    expect(m.attachments.map((a: any) => [a.name, a.mime_type, a.size])).toEqual([['Zahlungsavis.pdf', 'application/pdf', pdf.length]]);
    const remittances = m.results.filter((r: any) => r.object === 'remittance');
    expect(remittances).toHaveLength(1);

    const got = await stack.request('GET', `/v1/remittances/${remittances[0].id}`, { token: org.token });
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({
      source: 'email',
      bank_transaction_id: txId,
      email: { object: 'inbox_message', id: m.id, message_id: m.message_id, from: 'buchhaltung@nordlicht.example', from_name: 'Buchhaltung Nordlicht', subject: 'Zahlungsavis AV-NL-7781', received_at: m.received_at },
      attachment: { file_name: 'Zahlungsavis.pdf', content_type: 'application/pdf', size: pdf.length },
    });
    expect(got.body.allocations.map((a: any) => [a.invoice_number, a.invoice_id, a.amount_paid])).toEqual([
      ['7781001', invoiceIds['7781001'], 1190],
      ['7781002', invoiceIds['7781002'], 595],
    ]);
    const payment = (await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token })).body.data[0];
    expect(payment).toMatchObject({ remittance_id: remittances[0].id, partner_id: partnerId, allocated_amount: '1785.00' });

    const events = await stack.request('GET', '/v2/events?type=inbox_message.received', { token: org.token });
    const ours = events.body.data.filter((e: any) => e.data.object.id === m.id);
    expect(ours).toHaveLength(1);
    expect(ours[0].data.object.results).toEqual(m.results);

    // the workflow's history replays against today's code (RECORD_HISTORIES=1 records it)
    const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS!, namespace: stack.namespace });
    try {
      const handle = t.client.workflow.getHandle(inboxMessageWorkflowId(m.id));
      expect(await handle.result()).toBe('processed');
      await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'inbox-message-remittance.json');
    } finally {
      await t.close();
    }
  }, 180_000);

  it('a reply to a remittance request threads to it, and its advice pays the deposit the request was about', async () => {
    const txId = await deposit('500.00', 'Sender Unbekannt', null);
    const asked = await stack.request('POST', '/v2/cash-app/outreach/remittance-request', { token: org.token, body: { bank_transaction_id: txId, partner_id: partnerId } });
    expect(asked.status, asked.text).toBe(200);
    let record: any;
    for (const deadline = Date.now() + 60_000; ; ) {
      record = (await stack.request('GET', `/v2/cash-app/outreach/${asked.body.id}`, { token: org.token })).body;
      if (record.status !== 'pending' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(record, JSON.stringify(record)).toMatchObject({ status: 'sent', email_id: expect.stringMatching(/^<.+>$/) });

    const raw = await compose({
      from: 'buchhaltung@nordlicht.example',
      to: 'ar@inbound.example',
      subject: 'Re: Which invoices does your payment pay?',
      messageId: `<reply-${randomUUID()}@nordlicht.example>`,
      inReplyTo: record.email_id,
      references: [record.email_id],
      text: 'Here is the remittance you asked for.',
      attachments: [{ filename: 'advice.csv', content: 'Invoice;Paid\n7781003;500,00\n', contentType: 'text/csv' }],
    });
    const m = await receive(stack, org, raw, 120_000);
    expect(m).toMatchObject({ processing_state: 'processed', partner_id: partnerId, in_reply_to: { object: 'outreach_record', id: asked.body.id } });
    expect(m.match_reasons[0]).toMatchObject({ rule: 'reply_to_outbound' });
    const remittance = m.results.find((r: any) => r.object === 'remittance');
    expect(remittance, JSON.stringify(m)).toBeTruthy();
    const payment = (await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token })).body.data[0];
    expect(payment).toMatchObject({ remittance_id: remittance.id, partner_id: partnerId, allocated_amount: '500.00' });
    expect(payment.match_reasons[0]).toMatchObject({ rule: 'remittance', matched_by: 'bank_transaction' });
    expect(payment.allocations).toEqual([expect.objectContaining({ invoice_number: '7781003', amount_paid: '500.00' })]);
  }, 180_000);
});
