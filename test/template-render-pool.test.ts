/**
 * Liquid renders run off the API's event loop (spec 2.5; kernel template-pool.ts): through the
 * gateway, with admin's pool at one thread and one waiting render (TEMPLATE_RENDER_THREADS=1,
 * TEMPLATE_RENDER_QUEUE=1), so a full pool is reached with three requests. The slow render is a
 * template whose work grows with the customer's open invoices: cheap for the sample customer it is
 * checked against on save, over the 1 s render limit for a customer with 200 invoices. No SQL set-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let slowTemplateId: string;
let fastTemplateId: string;
let partnerId: string;

const req = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: org.token, body });
const SLOW_BODY = '{% for invoice in invoices %}{% for i in (1..50000) %}{% endfor %}{% endfor %}{{ invoices.size }} invoices';

beforeAll(async () => {
  stack = await startStack({ env: { TEMPLATE_RENDER_THREADS: '1', TEMPLATE_RENDER_QUEUE: '1' } });
  org = await stack.onboard('Render pool');
  const folder = await req('POST', '/v1/email-template-folders', { name: 'Dunning' });
  expect(folder.status, folder.text).toBe(200);
  const slow = await req('POST', '/v1/email-templates', { folder_id: folder.body.id, name: 'Slow', subject: 'Hello {{ customer.name }}', body: SLOW_BODY });
  expect(slow.status, slow.text).toBe(200);
  slowTemplateId = slow.body.id;
  const fast = await req('POST', '/v1/email-templates', { folder_id: folder.body.id, name: 'Fast', subject: 'Hello {{ customer.name }}', body: '{{ totals.open_count }} open' });
  expect(fast.status, fast.text).toBe(200);
  fastTemplateId = fast.body.id;
  const customer = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'MANY', name1: 'Many Invoices AG' })]);
  partnerId = customer.body.results[0]!.service_id!;
  for (let batch = 0; batch < 2; batch++) {
    const records = Array.from({ length: 100 }, (_, i) => {
      const n = `M-${batch * 100 + i + 1}`;
      return invoiceRecord({ customer_code: 'MANY', document_number: n, reference: n, amount_in_document_currency: 10 });
    });
    const pushed = await pushInvoices(stack, org.apiKey, records);
    expect(pushed.body.results.every((r) => r.success)).toBe(true);
  }
});
afterAll(async () => stack?.close());

const previewSlow = () => req('POST', `/v1/email-templates/${slowTemplateId}/preview`, { partner_id: partnerId });

describe('template renders off the event loop', () => {
  it('answers another request while a slow preview renders; the preview stops at the 1 s limit with 422 liquid_render', async () => {
    const finished: string[] = [];
    const preview = previewSlow().then((r) => (finished.push('preview'), r));
    // Let the preview reach its render (its two reads take milliseconds; the render takes 1 s).
    await new Promise((r) => setTimeout(r, 300));
    const get = await req('GET', `/v1/email-templates/${fastTemplateId}`);
    finished.push('get');
    expect(get.status).toBe(200);
    const res = await preview;
    // before: the render held the event loop, so the GET issued during it was answered after it
    expect(finished).toEqual(['get', 'preview']);
    expect(res.status, res.text).toBe(422);
    expect(JSON.stringify(res.body.detail.body)).toMatch(/render limit exceeded/);
  });

  it('a full pool answers 503 with Retry-After instead of queueing without bound, and renders again afterwards', async () => {
    const answers = await Promise.all([previewSlow(), previewSlow(), previewSlow(), previewSlow()]);
    const statuses = answers.map((r) => r.status);
    expect(statuses.every((s) => s === 422 || s === 503), statuses.join(',')).toBe(true);
    const refused = answers.filter((r) => r.status === 503);
    expect(refused.length, statuses.join(',')).toBeGreaterThanOrEqual(1);
    for (const r of refused) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r.body.message).toMatch(/busy/i);
    }
    // the pool is free again: a normal preview renders
    const ok = await req('POST', `/v1/email-templates/${fastTemplateId}/preview`, { partner_id: partnerId });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.preview_body).toBe('200 open');
  });
});
