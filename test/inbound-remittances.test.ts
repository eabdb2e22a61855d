/**
 * Remittance advice received by email, end to end on cash-app's side: the ledger pushed through the
 * middleware endpoints, bank statements uploaded through the gateway, the advice's attachments in
 * the run's object storage (where the inbox stores them), and recordInboundRemittances called the
 * way admin's inbox workflow calls it — from a workflow, on cash-app's task queue, served by the
 * real cash-app worker. Remittances and payments are read back through the gateway.
 *
 * Set-up outside the API: the attachment objects are written straight to the bucket (the inbox's
 * intake, another service, writes them there), and the inbox message ids are fresh UUIDs (the
 * activity's input names the message; cash-app keeps no copy of admin's inbox rows).
 */
import { randomUUID } from 'node:crypto';
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, ObjectStorage, type TemporalHandle } from '@rp/platform';
import { TASK_QUEUES, type InboundRemittanceInput, type InboundRemittanceResult } from '@rp/workflows';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

const TEST_QUEUE = 'inbound-remittance-test';
let stack: TestStack;
let org: Org;
let other: Org;
let storage: ObjectStorage;
let temporal: TemporalHandle;
let testWorker: Worker;
let testWorkerDone: Promise<void>;
const ids: Record<string, string> = {};

async function statement(txs: { amount: string; info?: string; name?: string }[]): Promise<string[]> {
  const res = await stack.request('POST', '/v2/bank-statements', {
    token: org.token,
    body: {
      account: 'DE44500105175407324931',
      currency: 'EUR',
      statement_number: `S-${randomUUID()}`,
      transactions: txs.map((t) => ({ amount: t.amount, booking_date: '2026-10-15', value_date: '2026-10-15', counterparty_name: t.name ?? null, remittance_information: t.info ?? null })),
    },
  });
  expect(res.status).toBe(200);
  const ready = await waitForStatement(stack, org.token, res.body.id as string);
  return (ready.transactions as { id: string; sequence: number }[]).sort((a, b) => a.sequence - b.sequence).map((t) => t.id);
}

async function paymentOf(txId: string) {
  const res = await stack.request('GET', `/v2/payments?bank_transaction_id=${txId}`, { token: org.token });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

/** Stores a file where the inbox keeps a message's attachment and returns the attachment as the activity's input names it. */
async function attachment(messageId: string, position: number, name: string, mime: string, bytes: Uint8Array) {
  const dir = await mkdtemp(join(tmpdir(), 'advice-'));
  const path = join(dir, name);
  await writeFile(path, bytes);
  const key = `inbox/${org.organizationId}/${messageId}/attachments/${position}`;
  await storage.putFile({ key, path, contentType: mime });
  return { position, name, mime_type: mime, size: bytes.length, object_key: key };
}

function input(messageId: string, o: Partial<InboundRemittanceInput>): InboundRemittanceInput {
  return {
    organizationId: org.organizationId,
    inboxMessageId: messageId,
    email: { id: messageId, message_id: `<${messageId}@mail.muster.example>`, from: 'ap@muster.example', from_name: 'Muster AP', subject: 'Zahlungsavis', received_at: '2026-10-14T09:30:00.000Z' },
    text: '',
    html: null,
    attachments: [],
    partnerId: null,
    bankTransactionId: null,
    ...o,
  };
}

/** recordInboundRemittances through the real cash-app worker, from a workflow as the inbox calls it. */
async function record(i: InboundRemittanceInput): Promise<InboundRemittanceResult> {
  return temporal.client.workflow.execute('recordInboundRemittancesForTest', { taskQueue: TEST_QUEUE, workflowId: `remit-test-${randomUUID()}`, args: [TASK_QUEUES.cashApp, i] });
}

async function germanPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const rows: [number, string][][] = [
    [[40, 'Muster Industrie AG - Zahlungsavis']],
    [[40, 'Zahlungsdatum: 14.10.2026'], [300, 'Zahlungsreferenz: AV-2026-1014']],
    [[40, 'Zahlungsart: SEPA-Überweisung'], [300, 'Betrag: EUR 1.761,20']],
    [[40, 'Rechnungsnr.'], [140, 'Rechnungsbetrag'], [260, 'Skonto'], [360, 'Zahlbetrag']],
    [[40, '9000001'], [140, '1.190,00'], [260, '23,80'], [360, '1.166,20']],
    [[40, '9000002'], [140, '595,00'], [360, '595,00']],
    [[40, 'Summe'], [360, '1.761,20']],
  ];
  rows.forEach((row, i) => row.forEach(([x, text]) => page.drawText(text, { x, y: 800 - i * 16, size: 9, font })));
  return doc.save();
}

beforeAll(async () => {
  stack = await startStack({ workers: ['cash-app'] });
  org = await stack.onboard('Inbound Remit');
  other = await stack.onboard('Inbound Remit Other');
  const customers = await pushCustomers(stack, org.apiKey, [
    customerRecord({ customer_code: 'C-100', name1: 'Muster Industrie AG', smtp_addr: 'ap@muster.example' }),
    customerRecord({ customer_code: 'C-200', name1: 'Beta Retail AG', smtp_addr: 'ap@beta.example' }),
  ]);
  expect(customers.body.results.every((r) => r.success)).toBe(true);
  ids.muster = customers.body.results[0]!.service_id!;
  const invoices = await pushInvoices(stack, org.apiKey, [
    invoiceRecord({ document_number: '9000001', reference: 'INV-9000001', customer_code: 'C-100', amount_in_document_currency: 1190 }),
    invoiceRecord({ document_number: '9000002', reference: 'INV-9000002', customer_code: 'C-100', amount_in_document_currency: 595 }),
    invoiceRecord({ document_number: '9000003', reference: 'INV-9000003', customer_code: 'C-100', amount_in_document_currency: 300 }),
    invoiceRecord({ document_number: '9000004', reference: 'INV-9000004', customer_code: 'C-200', amount_in_document_currency: 500 }),
  ]);
  expect(invoices.body.results.every((r) => r.success)).toBe(true);
  for (const r of invoices.body.results) ids[r.remote_id!] = r.service_id!;
  storage = new ObjectStorage({
    endpoint: stack.env.S3_ENDPOINT!,
    bucket: stack.env.S3_BUCKET!,
    accessKeyId: stack.env.S3_ACCESS_KEY_ID!,
    secretAccessKey: stack.env.S3_SECRET_ACCESS_KEY!,
    region: stack.env.S3_REGION!,
  });
  await storage.ready();
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS!, namespace: stack.namespace });
  const connection = await NativeConnection.connect({ address: stack.env.TEMPORAL_ADDRESS! });
  testWorker = await Worker.create({ connection, namespace: stack.namespace, taskQueue: TEST_QUEUE, workflowsPath: fileURLToPath(new URL('./support/inbound-remittance-workflow.ts', import.meta.url)) });
  testWorkerDone = testWorker.run().finally(() => connection.close());
}, 180_000);

afterAll(async () => {
  if (testWorker?.getState() === 'RUNNING') testWorker.shutdown();
  await testWorkerDone?.catch(() => {});
  storage?.close();
  await temporal?.close();
  await stack?.close();
});

describe('remittance advice from email', () => {
  it('a PDF advice becomes allocations and lets the bank line waiting for it match; recording it again changes nothing', async () => {
    // the deposit arrives first: no payer the engine knows, no invoice number, an amount no invoice has
    const [txId] = await statement([{ amount: '1761.20', info: 'Sammelzahlung AV-2026-1014', name: 'Muster Zahlungsdienst' }]);
    expect(await paymentOf(txId!)).toBeUndefined();

    const messageId = randomUUID();
    const pdf = await germanPdf();
    const file = await attachment(messageId, 0, 'Zahlungsavis.pdf', 'application/pdf', pdf);
    const result = await record(input(messageId, { text: 'Sehr geehrte Damen und Herren, anbei unser Zahlungsavis.', attachments: [file] }));
    expect(result).toEqual({ remittanceIds: [expect.any(String)], rematchedTransactionIds: [txId], errorCode: null });
    const remittanceId = result.remittanceIds[0]!;

    const got = await stack.request('GET', `/v1/remittances/${remittanceId}`, { token: org.token });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      source: 'email',
      status: 'applied',
      bank_transaction_id: txId,
      currency: 'EUR',
      transaction_amount: 1761.2,
      transaction_date: '2026-10-14',
      transaction_number: 'AV-2026-1014',
      payment_method: 'bank_transfer',
      payer_email: 'ap@muster.example',
      agent_confidence_score: 1,
      agent_error_code: null,
      agent_uncertainties: [],
      partner: { id: ids.muster, name: 'Muster Industrie AG' },
      email: { object: 'inbox_message', id: messageId, message_id: `<${messageId}@mail.muster.example>`, from: 'ap@muster.example', from_name: 'Muster AP', subject: 'Zahlungsavis', received_at: '2026-10-14T09:30:00.000Z' },
      attachment: { object: 'attachment', file_name: 'Zahlungsavis.pdf', content_type: 'application/pdf', size: pdf.length },
    });
    expect(got.body.allocations.map((a: any) => [a.invoice_number, a.invoice_id, a.amount_paid, a.amount_discount, a.amount_withheld])).toEqual([
      ['9000001', ids['9000001'], 1166.2, 23.8, 0],
      ['9000002', ids['9000002'], 595, 0, 0],
    ]);
    // the file itself, through the answer's presigned URL
    const download = await fetch(got.body.attachment.presigned_url as string);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(pdf))).toBe(true);

    const payment = await paymentOf(txId!);
    expect(payment).toMatchObject({ remittance_id: remittanceId, partner_id: ids.muster, allocated_amount: '1761.20' });
    expect(payment.allocations).toEqual([
      expect.objectContaining({ invoice_number: '9000001', amount_paid: '1166.20', amount_discount: '23.80' }),
      expect.objectContaining({ invoice_number: '9000002', amount_paid: '595.00' }),
    ]);
    expect(payment.match_reasons[0]).toEqual({ rule: 'remittance', remittance_id: remittanceId, matched_by: 'transaction_number', value: 'AV-2026-1014' });

    // a retried activity finds what it recorded: one remittance, one event, one payment
    expect(await record(input(messageId, { attachments: [file] }))).toEqual({ remittanceIds: [remittanceId], rematchedTransactionIds: [], errorCode: null });
    expect(await stack.sql(`SELECT id FROM cash_app.remittances WHERE inbox_message_id = $1`, [messageId])).toHaveLength(1);
    expect(await stack.sql(`SELECT id FROM cash_app.events WHERE type = 'remittance.created' AND resource_id = $1`, [remittanceId])).toHaveLength(1);
    expect(await stack.sql(`SELECT id FROM cash_app.payments WHERE bank_transaction_id = $1`, [txId])).toHaveLength(1);
  });

  it('an advice in an HTML body that arrives first meets the bank line arriving after it', async () => {
    const messageId = randomUUID();
    const html =
      '<p>Dear accounts receivable team,</p><p>Please find our payment advice below. Payment reference: PAY-88231</p>' +
      '<table><tr><th>Invoice #</th><th>Invoice Amount</th><th>Discount</th><th>Amount Paid</th></tr>' +
      '<tr><td>9000003</td><td>300.00</td><td></td><td>300.00</td></tr><tr><td>Total</td><td></td><td></td><td>300.00</td></tr></table>';
    const result = await record(input(messageId, { html, text: 'Please find our payment advice below.' }));
    expect(result).toEqual({ remittanceIds: [expect.any(String)], rematchedTransactionIds: [], errorCode: null });
    const remittance = (await stack.request('GET', `/v1/remittances/${result.remittanceIds[0]}`, { token: org.token })).body;
    expect(remittance).toMatchObject({ status: 'submitted', transaction_amount: 300, transaction_number: 'PAY-88231', attachment: null, bank_transaction_id: null });

    const [txId] = await statement([{ amount: '300.00', info: 'PAY-88231', name: 'Unknown Sender Ltd' }]);
    const payment = await paymentOf(txId!);
    expect(payment).toMatchObject({ remittance_id: remittance.id, allocated_amount: '300.00' });
    expect(payment.allocations).toEqual([expect.objectContaining({ invoice_number: '9000003', amount_paid: '300.00' })]);
  });

  it('the advice answering a deposit\'s remittance request is applied to that deposit', async () => {
    const [txId] = await statement([{ amount: '500.00', name: 'Sender Unbekannt' }]);
    expect(await paymentOf(txId!)).toBeUndefined();
    const messageId = randomUUID();
    const csv = Buffer.from('Invoice;Paid\n9000004;500,00\n', 'utf8');
    const file = await attachment(messageId, 0, 'advice.csv', 'text/csv', csv);
    const result = await record(input(messageId, { text: 'Here is the remittance you asked for.', attachments: [file], bankTransactionId: txId! }));
    expect(result).toEqual({ remittanceIds: [expect.any(String)], rematchedTransactionIds: [txId], errorCode: null });
    const payment = await paymentOf(txId!);
    expect(payment.match_reasons[0]).toEqual({ rule: 'remittance', remittance_id: result.remittanceIds[0], matched_by: 'bank_transaction', value: null });
    expect(payment.allocations).toEqual([expect.objectContaining({ invoice_number: '9000004', amount_paid: '500.00' })]);
  });

  it('a message with nothing readable is recorded with the reason, and changes no bank line', async () => {
    const messageId = randomUUID();
    const tnef = await attachment(messageId, 0, 'winmail.dat', 'application/ms-tnef', Buffer.from('x\u0000tnef'));
    const result = await record(input(messageId, { text: 'Payment sent, details attached.', attachments: [tnef] }));
    expect(result).toEqual({ remittanceIds: [expect.any(String)], rematchedTransactionIds: [], errorCode: 'unsupported_attachment' });
    const r = (await stack.request('GET', `/v1/remittances/${result.remittanceIds[0]}`, { token: org.token })).body;
    expect(r).toMatchObject({ source: 'email', allocations: [], agent_confidence_score: 0, agent_error_code: 'unsupported_attachment', transaction_amount: null });
    expect(r.agent_uncertainties).toEqual(['unsupported_attachment: winmail.dat: TNEF (winmail.dat) attachments are not supported; ask the sender to send the files as ordinary attachments.']);
  });

  it('an advice sent to another organization never links this organization\'s invoices', async () => {
    const messageId = randomUUID();
    const result = await record(
      input(messageId, { organizationId: other.organizationId, text: 'Remittance advice\nInvoice 9000002: EUR 595,00\nPayment amount: EUR 595,00' }),
    );
    expect(result.errorCode).toBeNull();
    const r = (await stack.request('GET', `/v1/remittances/${result.remittanceIds[0]}`, { token: other.token })).body;
    expect(r.allocations.map((a: any) => [a.invoice_number, a.invoice_id, a.amount_paid])).toEqual([['9000002', null, 595]]);
    expect(r).toMatchObject({ partner: null, agent_error_code: 'no_invoice_matched' });
    expect(r.agent_uncertainties).toContain('invoice_not_found: 9000002');
    expect((await stack.request('GET', `/v1/remittances/${result.remittanceIds[0]}`, { token: org.token })).status).toBe(404);
  });

  it('lines naming no ledger invoice keep the customer the inbox matched the email to, and say so', async () => {
    const messageId = randomUUID();
    const result = await record(input(messageId, { partnerId: ids.muster!, text: 'Remittance advice\nInvoice 7777777: EUR 120,00' }));
    const r = (await stack.request('GET', `/v1/remittances/${result.remittanceIds[0]}`, { token: org.token })).body;
    expect(r).toMatchObject({ partner: { id: ids.muster }, agent_error_code: 'no_invoice_matched', agent_uncertainties: ['invoice_not_found: 7777777', 'partner_not_identified'] });
    expect(r.agent_confidence_reason).toBe('Read 1 line from the email body. None of the 1 invoice number matched a ledger invoice; no customer could be identified. The customer is the one the email was matched to.');
  });
});
