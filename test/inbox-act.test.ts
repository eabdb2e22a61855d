/**
 * What a read customer message does (services/admin/src/domain/inbox/act.ts): a promise to pay and a
 * dispute are recorded through the collections rules with the message as their `source` (seen
 * through the API), once however often the reading is acted on; an unsure reading or an invoice that
 * is not the customer's leaves a suggestion and records nothing; a bounce marks the address and a
 * real collection run then skips the customer's email step (`email_bouncing`) while another customer
 * is emailed. The messages are read by the real readers (readMessage) from realistic text.
 * SQL set-up: the received inbox message rows (what inbound intake writes when mail arrives), so
 * the actor is exercised by itself against the real database, Temporal and SMTP sink.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal, createDb, type Db } from '@rp/platform';
import { actOnReading } from '../services/admin/src/domain/inbox/act.js';
import { readMessage } from '../services/admin/src/domain/inbox/reading/index.js';
import type { ParsedInboundMessage } from '../services/admin/src/domain-types/inbox.js';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { actionsOf, customer, emailTemplate, plusDays, policy, runCollections, todayIn } from './support/collections.js';

let stack: TestStack;
let db: Db;
let temporal: { client: Client; close(): Promise<void> };
const today = () => todayIn('Europe/Berlin');

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_BURST: '10000' } });
  db = createDb({ url: stack.databaseUrl, schema: 'admin', poolMax: 2 });
  temporal = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS, namespace: stack.namespace });
}, 180_000);
afterAll(async () => {
  await db?.destroy();
  await temporal?.close();
  await stack?.close();
});

const deps = () => ({ db, temporal: temporal.client });

/** An inbox message row as intake records it, and the parsed message the readers read. */
async function received(o: Org, from: string, subject: string, text: string, extra: Partial<ParsedInboundMessage> = {}) {
  const id = randomUUID();
  const messageId = `<${id}@customer.example>`;
  await stack.sql(
    `INSERT INTO admin.inbox_messages (id, organization_id, message_id, thread_id, transport, raw_object_key, raw_size, raw_sha256, from_address, subject, text_body)
     VALUES ($1, $2, $3, $3, 'smtp', $4, 100, 'x', $5, $6, $7)`,
    [id, o.organizationId, messageId, `inbox/${o.organizationId}/${id}/raw.eml`, from, subject, text],
  );
  const parsed: ParsedInboundMessage = {
    messageId,
    inReplyTo: null,
    references: [],
    from: { address: from, name: null },
    to: [{ address: 'ar@inbound.example', name: null }],
    cc: [],
    subject,
    date: new Date().toISOString(),
    headers: {},
    text,
    html: null,
    attachments: [],
    deliveryStatus: null,
    unsupported: [],
    ...extra,
  };
  return { id, reading: readMessage(parsed, { today: today(), timezone: 'Europe/Berlin' }) };
}

async function documentNumber(invoiceId: string): Promise<string> {
  const [row] = await stack.sql('SELECT document_number FROM integrations.documents WHERE id = $1', [invoiceId]);
  return row.document_number as string;
}

describe('promises to pay read from a message', () => {
  it('records the promise with its source, on the open amount; acting again changes nothing', async () => {
    const o = await stack.onboard('Inbox Promise Org');
    const c = await customer(stack, o, { name: 'Promise Kunde GmbH', invoices: [{ due: plusDays(today(), -10), amount: 1190 }, { due: plusDays(today(), -5), amount: 500 }] });
    const [n1, n2] = await Promise.all(c.invoiceIds.map(documentNumber));
    const date = plusDays(today(), 9);
    const [y, m, d] = date.split('-');
    const msg = await received(o, c.email, `AW: Zahlungserinnerung ${n1}`, `Guten Tag,\n\ndie Rechnungen ${n1} und ${n2} werden am ${d}.${m}.${y} überwiesen.\n\nMit freundlichen Grüßen\nErika Muster\nPromise Kunde GmbH`);
    expect(msg.reading).toMatchObject({ category: 'promise_to_pay', promise: { invoice_numbers: [n1, n2], promised_date: date, amount: null } });

    const input = { organizationId: o.organizationId, message: { id: msg.id, partner_id: c.partnerId, from_address: c.email }, reading: msg.reading, partnerConfident: true };
    const first = await actOnReading(deps(), input);
    expect(first.suggestions).toEqual([]);
    expect(first.results).toEqual([{ object: 'promise_to_pay', id: expect.any(String) }]);
    const again = await actOnReading(deps(), input);
    expect(again.results).toEqual(first.results);

    const listed = await stack.request('GET', `/v2/promises-to-pay?partner_id=${c.partnerId}`, { token: o.token });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({
      id: first.results[0]!.id,
      status: 'open',
      amount: '1690.00',
      promised_date: date,
      invoice_ids: c.invoiceIds,
      created_by: null,
      source: { object: 'inbox_message', id: msg.id },
    });
    expect(listed.body.data[0].note).toContain('werden am');

  });

  it('an unsure customer match, an invoice of another customer or a missing date leaves a suggestion and records nothing', async () => {
    const o = await stack.onboard('Inbox Suggest Org');
    const c = await customer(stack, o, { name: 'Suggest AG', invoices: [{ due: plusDays(today(), -10) }] });
    const other = await customer(stack, o, { name: 'Other AG', invoices: [{ due: plusDays(today(), -10) }] });
    const mine = await documentNumber(c.invoiceIds[0]!);
    const theirs = await documentNumber(other.invoiceIds[0]!);

    const sure = await received(o, c.email, 'Re: reminder', `Hello,\nwe will pay invoice ${mine} next Friday.\nRegards\nSuggest AG`);
    const unsure = await actOnReading(deps(), { organizationId: o.organizationId, message: { id: sure.id, partner_id: c.partnerId, from_address: c.email }, reading: sure.reading, partnerConfident: false });
    expect(unsure.results).toEqual([]);
    expect(unsure.suggestions).toEqual([expect.objectContaining({ type: 'promise_to_pay', invoice_numbers: [mine], reason: expect.stringContaining('not matched with enough confidence') })]);

    const wrong = await received(o, c.email, 'Re: reminder', `Hello,\nwe will pay invoice ${theirs} on ${plusDays(today(), 3)}.\nRegards`);
    const notTheirs = await actOnReading(deps(), { organizationId: o.organizationId, message: { id: wrong.id, partner_id: c.partnerId, from_address: c.email }, reading: wrong.reading, partnerConfident: true });
    expect(notTheirs.suggestions).toEqual([expect.objectContaining({ type: 'promise_to_pay', reason: `Invoice ${theirs} is not an open invoice of the customer.` })]);

    const undated = await received(o, c.email, 'Re: reminder', `Hello,\nwe will pay invoice ${mine} as soon as possible.\nRegards`);
    expect(undated.reading.promise).toMatchObject({ promised_date: null });
    const noDate = await actOnReading(deps(), { organizationId: o.organizationId, message: { id: undated.id, partner_id: c.partnerId, from_address: c.email }, reading: undated.reading, partnerConfident: true });
    expect(noDate.results).toEqual([]);
    expect(noDate.suggestions).toHaveLength(1);

    const listed = await stack.request('GET', '/v2/promises-to-pay', { token: o.token });
    expect(listed.body.total_records).toBe(0);

    // recorded through the API, a promise has no source
    const manual = await stack.request('POST', '/v2/promises-to-pay', { token: o.token, body: { partner_id: c.partnerId, invoice_ids: c.invoiceIds, amount: 100, promised_date: plusDays(today(), 2) } });
    expect(manual.status, manual.text).toBe(200);
    expect(manual.body).toMatchObject({ created_by: o.userId, source: null });

    // the collections rules still apply: an invoice under an open promise gets no second one
    const held = await actOnReading(deps(), { organizationId: o.organizationId, message: { id: sure.id, partner_id: c.partnerId, from_address: c.email }, reading: sure.reading, partnerConfident: true });
    expect(held.results).toEqual([]);
    expect(held.suggestions).toEqual([expect.objectContaining({ type: 'promise_to_pay', reason: expect.stringMatching(/^Not recorded: .*under an open promise to pay already/) })]);
  });
});

describe('disputes read from a message', () => {
  it('opens a dispute with the reason read and the message as source, once', async () => {
    const o = await stack.onboard('Inbox Dispute Org');
    const c = await customer(stack, o, { name: 'Dupont SARL', invoices: [{ due: plusDays(today(), -10) }] });
    const n = await documentNumber(c.invoiceIds[0]!);
    const msg = await received(o, c.email, `Facture ${n}`, `Bonjour,\n\nla facture ${n} est erronée : les marchandises sont arrivées endommagées.\n\nCordialement\nPierre Dupont\nDupont SARL`);
    expect(msg.reading).toMatchObject({ category: 'dispute', dispute: { invoice_numbers: [n], reason_code: 'damaged' } });
    const input = { organizationId: o.organizationId, message: { id: msg.id, partner_id: c.partnerId, from_address: c.email }, reading: msg.reading, partnerConfident: true };
    const first = await actOnReading(deps(), input);
    expect(first).toEqual({ results: [{ object: 'dispute', id: expect.any(String) }], suggestions: [] });
    expect(await actOnReading(deps(), input)).toEqual(first);
    const got = await stack.request('GET', `/v2/disputes/${first.results[0]!.id}`, { token: o.token });
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ invoice_id: c.invoiceIds[0], reason_code: 'damaged', status: 'open', source: { object: 'inbox_message', id: msg.id } });
  });
});

describe('bounces', () => {
  it('a failed delivery marks the address and the next collection run skips emailing it, while others are emailed', async () => {
    const o = await stack.onboard('Inbox Bounce Org');
    const tpl = await emailTemplate(stack, o, 'Reminder {{ customer.name }}', 'Please pay.');
    await policy(stack, o, { segmentId: null, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl }] });
    const due = plusDays(today(), -3);
    const bouncing = await customer(stack, o, { name: 'Gone Ltd', invoices: [{ due }] });
    const fine = await customer(stack, o, { name: 'Fine Ltd', invoices: [{ due }] });

    const dsn = await received(o, 'MAILER-DAEMON@mx.customer.example', 'Undelivered Mail Returned to Sender', 'This is the mail system at host mx.customer.example.\n\nI\'m sorry to have to inform you that your message could not be delivered.', {
      from: { address: 'MAILER-DAEMON@mx.customer.example', name: 'Mail Delivery System' },
      deliveryStatus: { reportingMta: 'dns; mx.customer.example', recipients: [{ address: bouncing.email.toUpperCase(), action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 user unknown' }] },
    });
    expect(dsn.reading.category).toBe('bounce');
    const acted = await actOnReading(deps(), { organizationId: o.organizationId, message: { id: dsn.id, partner_id: null, from_address: 'mailer-daemon@mx.customer.example' }, reading: dsn.reading, partnerConfident: false });
    expect(acted).toEqual({ results: [], suggestions: [] });
    const rows = await stack.sql('SELECT address, partner_id, status_code, inbox_message_id FROM admin.email_bounces WHERE organization_id = $1', [o.organizationId]);
    expect(rows).toEqual([{ address: bouncing.email.toLowerCase(), partner_id: bouncing.partnerId, status_code: '5.1.1', inbox_message_id: dsn.id }]);

    const run = await runCollections(stack, o);
    expect(run).toMatchObject({ status: 'completed', skipped: 1, sent: 1 });
    const byPartner = Object.fromEntries((await actionsOf(stack, o.token, `run_id=${run.id}`)).map((a) => [a.partner_id, a]));
    expect(byPartner[bouncing.partnerId]).toMatchObject({ status: 'skipped', skip_reason: 'email_bouncing', email_id: null });
    expect(byPartner[fine.partnerId]).toMatchObject({ status: 'sent', skip_reason: null });
    expect(await waitForMail(fine.email)).toHaveLength(1);
    const skipped = await actionsOf(stack, o.token, `run_id=${run.id}&status=skipped`);
    expect(skipped.map((a) => a.partner_id)).toEqual([bouncing.partnerId]);
  });
});
