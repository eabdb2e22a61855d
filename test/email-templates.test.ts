/**
 * Email template folders, templates, Liquid validation, previews and attachments (spec
 * 2.5, rows 6 and 7, part 8) through the gateway; attachments upload to the run's real S3 server
 * (versitygw) through the presigned URLs the API hands out. One SQL statement: the partial unique
 * index behind "one default per folder" is exercised directly, since no endpoint can produce two
 * defaults (that is the point).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { ParsedTemplateCache } from '@rp/platform';
import { METRICS_TOKEN, startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let a: Org;
let b: Org;

beforeAll(async () => {
  stack = await startStack();
  [a, b] = await Promise.all([stack.onboard('Templates A'), stack.onboard('Templates B')]);
});
afterAll(async () => stack?.close());

const req = (org: Org, method: string, path: string, body?: unknown) => stack.request(method, path, { token: org.token, body });

async function folder(org: Org, name = 'Dunning'): Promise<string> {
  const res = await req(org, 'POST', '/v1/email-template-folders', { name });
  expect(res.status, res.text).toBe(200);
  return res.body.id;
}

async function template(org: Org, folderId: string, over: Record<string, unknown> = {}) {
  const res = await req(org, 'POST', '/v1/email-templates', { folder_id: folderId, name: 'First reminder', subject: 'Reminder for {{ customer.name }}', body: 'Dear {{ customer.name }}, {{ totals.overdue_amount }} is overdue.', ...over });
  return res;
}

/** The v1 validation shape: {detail: {<location>: {<field>: [messages]}}, message}. */
function expectV1Validation(res: { status: number; body: any }, location: string, field: string) {
  expect(res.status).toBe(422);
  expect(res.body.message).toEqual(expect.any(String));
  const keys = Object.keys(res.body.detail[location]).filter((k) => k === field || k.startsWith(`${field}.`));
  expect(keys.length, JSON.stringify(res.body)).toBeGreaterThan(0);
  for (const k of keys) expect(res.body.detail[location][k]).toEqual(expect.arrayContaining([expect.any(String)]));
}

describe('folders (rows 6, 7)', () => {
  it('creates a folder with a 256-character name and refuses 257 (v1 validation shape)', async () => {
    const ok = await req(a, 'POST', '/v1/email-template-folders', { name: 'x'.repeat(256) });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ object: 'email_template_folder', name: 'x'.repeat(256), templates: [] });
    expect(ok.body.created_at).toMatch(/Z$/);
    expectV1Validation(await req(a, 'POST', '/v1/email-template-folders', { name: 'x'.repeat(257) }), 'body', 'name');
    expectV1Validation(await req(a, 'POST', '/v1/email-template-folders', { name: '   ' }), 'body', 'name');
    expectV1Validation(await req(a, 'POST', '/v1/email-template-folders', {}), 'body', 'name');
  });

  it('lists folders with their templates; page_size 1..200 and page >= 0', async () => {
    const org = await stack.onboard('Paging');
    const f1 = await folder(org, 'One');
    await folder(org, 'Two');
    expect((await template(org, f1)).status).toBe(200);
    const list = await req(org, 'GET', '/v1/email-template-folders?page_size=200');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ current_page: 0, total_records: 2, next_page: null });
    expect(list.body.data.map((f: any) => f.name)).toEqual(['One', 'Two']);
    expect(list.body.data[0].templates).toHaveLength(1);
    expect(list.body.data[0].templates[0]).toMatchObject({ object: 'email_template', folder_id: f1, folder: { id: f1, name: 'One' } });
    const p = await req(org, 'GET', '/v1/email-template-folders?page=1&page_size=1');
    expect(p.body).toMatchObject({ current_page: 1, total_records: 2, next_page: null });
    expect(p.body.data.map((f: any) => f.name)).toEqual(['Two']);
    expectV1Validation(await req(org, 'GET', '/v1/email-template-folders?page_size=201'), 'query', 'page_size');
    expectV1Validation(await req(org, 'GET', '/v1/email-template-folders?page_size=0'), 'query', 'page_size');
    expectV1Validation(await req(org, 'GET', '/v1/email-template-folders?page=-1'), 'query', 'page');
  });

  it('renames a folder; deleting one with templates is 409 unless cascade=true', async () => {
    const f = await folder(a, 'To delete');
    const renamed = await req(a, 'PATCH', `/v1/email-template-folders/${f}`, { name: 'Renamed' });
    expect(renamed.body.name).toBe('Renamed');
    const t = (await template(a, f)).body.id;
    const refused = await req(a, 'DELETE', `/v1/email-template-folders/${f}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ data: expect.any(Object), error: expect.any(String), message: expect.stringMatching(/cascade=true/) });
    expect((await req(a, 'GET', `/v1/email-templates/${t}`)).status).toBe(200);
    expect((await req(a, 'DELETE', `/v1/email-template-folders/${f}?cascade=true`)).status).toBe(204);
    expect((await req(a, 'GET', `/v1/email-templates/${t}`)).status).toBe(404);
    const gone = await req(a, 'GET', `/v1/email-template-folders/${f}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ data: expect.any(Object), error: expect.any(String), message: expect.any(String) });
    // an empty folder goes without cascade
    expect((await req(a, 'DELETE', `/v1/email-template-folders/${await folder(a)}`)).status).toBe(204);
  });
});

describe('templates and Liquid', () => {
  it('refuses a syntax error with the line and column', async () => {
    const f = await folder(a);
    const res = await template(a, f, { body: 'Hello\n  {% if customer.name %}unclosed' });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toMatch(/line 2, column 3/);
  });

  it('refuses an unknown variable with the line and column, also in a branch the sample would not take and in loop items', async () => {
    const f = await folder(a);
    const unknown = await template(a, f, { body: 'Hi\n{{ customer.nmae }}' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message + JSON.stringify(unknown.body.detail)).toMatch(/customer\.nmae/);
    expect(JSON.stringify(unknown.body)).toMatch(/line 2, column 4/);
    const branch = await template(a, f, { subject: '{% if false %}{{ secret_password }}{% endif %}x' });
    expect(branch.status).toBe(422);
    expect(JSON.stringify(branch.body)).toMatch(/secret_password.*line 1, column 18|line 1, column 18.*secret_password/);
    const loop = await template(a, f, { body: '{% for i in invoices %}{{ i.number }} {{ i.bogus }}{% endfor %}' });
    expect(loop.status).toBe(422);
    expect(JSON.stringify(loop.body)).toMatch(/i\.bogus/);
    // no files to include (these were a 500 before the parse/analyse errors were caught), and bounded loops
    for (const body of ['{% include "secrets" %}', '{%- render "x" -%}', '{% layout "x" %}', '{% liquid\ninclude "x" %}', '{% include customer.name %}', '{% for i in (1..100000000) %}{{ i }}{% endfor %}']) {
      const res = await template(a, f, { body });
      expect(res.status, body).toBe(422);
    }
    const filter = await template(a, f, { body: '{{ customer.name | shell }}' });
    expect(filter.status).toBe(422);
    expect(JSON.stringify(filter.body)).toMatch(/shell/);
  });

  it('auto_correct rewrites near-miss variable paths to the catalogue; without it they are refused', async () => {
    const f = await folder(a);
    const body = 'Account {{ Customer.accountNumber }} of {{ ORGANIZATION.name }}: {{ totals.open-amount }}';
    expect((await template(a, f, { body })).status).toBe(422);
    const fixed = await template(a, f, { body, auto_correct: true });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.body.auto_correct).toBe(true);
    expect(fixed.body.body).toBe('Account {{ customer.account_number }} of {{ organization.name }}: {{ totals.open_amount }}');
    // auto_correct does not invent variables
    expect((await template(a, f, { body: '{{ customer.shoe_size }}', auto_correct: true })).status).toBe(422);
  });

  it('keeps at most one default per folder, atomically, backed by a partial unique index', async () => {
    const f = await folder(a);
    const t1 = (await template(a, f, { is_default: true })).body.id;
    const t2 = (await template(a, f, { is_default: true })).body;
    expect(t2.is_default).toBe(true);
    expect((await req(a, 'GET', `/v1/email-templates/${t1}`)).body.is_default).toBe(false);
    const back = await req(a, 'PATCH', `/v1/email-templates/${t1}`, { is_default: true });
    expect(back.body.is_default).toBe(true);
    expect((await req(a, 'GET', `/v1/email-templates/${t2.id}`)).body.is_default).toBe(false);
    // concurrent set-defaults: exactly one wins, none fails
    const results = await Promise.all([t1, t2.id].map((id) => req(a, 'PATCH', `/v1/email-templates/${id}`, { is_default: true })));
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    const rows = await stack.sql('SELECT count(*)::int AS n FROM admin.email_templates WHERE folder_id = $1 AND is_default', [f]);
    expect(rows[0].n).toBe(1);
    await expect(stack.sql('UPDATE admin.email_templates SET is_default = true WHERE folder_id = $1', [f])).rejects.toThrow(/email_templates_one_default/);
    // a default in another folder is independent
    const g = await folder(a);
    expect((await template(a, g, { is_default: true })).body.is_default).toBe(true);
    expect((await stack.sql('SELECT count(*)::int AS n FROM admin.email_templates WHERE folder_id = $1 AND is_default', [f]))[0].n).toBe(1);
  });

  it('PATCH changes only the fields sent and validates the Liquid it changes', async () => {
    const f = await folder(a);
    const t = (await template(a, f, { cc: ['ar@a.example'] })).body;
    const res = await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { name: 'Renamed' });
    expect(res.body).toMatchObject({ name: 'Renamed', subject: t.subject, body: t.body, cc: ['ar@a.example'] });
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { subject: '{{ nope }}' })).status).toBe(422);
    expect((await req(a, 'GET', `/v1/email-templates/${t.id}`)).body.subject).toBe(t.subject);
    expectV1Validation(await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { cc: ['not-an-email'] }), 'body', 'cc');
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { folder_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });

  it('previews with the sample customer and with a live customer from the ledger', async () => {
    const f = await folder(a);
    const t = (
      await template(a, f, {
        subject: 'Reminder: {{ totals.overdue_count }} overdue for {{ customer.name }}',
        body: '{% for i in overdue_invoices %}{{ i.number }} {{ i.amount_open }} {{ i.currency }} ({{ i.days_overdue }} days); {% endfor %}total {{ totals.open_amount }} from {{ organization.name }}',
      })
    ).body;
    const sample = await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, {});
    expect(sample.status).toBe(200);
    expect(sample.body.preview_subject).toBe('Reminder: 2 overdue for Sample Customer GmbH');
    expect(sample.body.preview_body).toBe('INV-1001 1200.00 EUR (45 days); INV-1002 300.50 EUR (9 days); total 1950.50 from Templates A');

    const pushed = await pushCustomers(stack, a.apiKey, [customerRecord({ customer_code: 'P-1', name1: 'Live Kunde GmbH' })]);
    const partnerId = pushed.body.results[0].service_id;
    const due = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    await pushInvoices(stack, a.apiKey, [
      invoiceRecord({ customer_code: 'P-1', document_number: 'L-1', reference: 'L-1', amount_in_document_currency: 100, net_due_date: due }),
      invoiceRecord({ customer_code: 'P-1', document_number: 'L-2', reference: 'L-2', amount_in_document_currency: 50, net_due_date: '2099-01-01' }),
    ]);
    const live = await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, { partner_id: partnerId });
    expect(live.status, live.text).toBe(200);
    expect(live.body.preview_subject).toBe('Reminder: 1 overdue for Live Kunde GmbH');
    expect(live.body.preview_body).toMatch(/^L-1 100(\.0+)? EUR \((9|10|11) days\); total 150\.00 from Templates A$/);
    // a partner of another organization is unknown here
    const other = await pushCustomers(stack, b.apiKey, [customerRecord({ customer_code: 'P-1', name1: 'B Kunde' })]);
    const res = await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, { partner_id: other.body.results[0].service_id });
    expect(res.status).toBe(404);
  });
});

describe('totals of a customer with invoices in several currencies', () => {
  it('previews per-currency totals in each currency\'s minor units, never one sum, and a base figure only once every currency has a rate (naming it)', async () => {
    const org = await stack.onboard('Totals FX'); // base currency EUR
    const f = await folder(org);
    const oneFigure = await template(org, f, { subject: 'Open {{ totals.open_amount }} {{ totals.currency }}', body: 'Overdue {{ totals.overdue_amount }} {{ totals.currency }}' });
    expect(oneFigure.status, oneFigure.text).toBe(200);

    const pushed = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: 'FX-1', name1: 'Tokyo Trading KK' })]);
    const partnerId = pushed.body.results[0].service_id;
    const due = new Date(Date.now() - 10 * 86_400_000).toISOString().slice(0, 10);
    const invoices = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ customer_code: 'FX-1', document_number: 'E-1', reference: 'E-1', currency: 'EUR', amount_in_document_currency: 100, net_due_date: due }),
      invoiceRecord({ customer_code: 'FX-1', document_number: 'J-1', reference: 'J-1', currency: 'JPY', amount_in_document_currency: 15000, amount_in_local_currency: 93.75, exchange_rate: '0.00625', net_due_date: due }),
      invoiceRecord({ customer_code: 'FX-1', document_number: 'J-2', reference: 'J-2', currency: 'JPY', amount_in_document_currency: 2500, amount_in_local_currency: 15.63, exchange_rate: '0.00625', net_due_date: '2099-01-01' }),
    ]);
    expect(invoices.body.results.every((r) => r.success), JSON.stringify(invoices.body)).toBe(true);
    const preview = async (t: { id: string }) => {
      const res = await req(org, 'POST', `/v1/email-templates/${t.id}/preview`, { partner_id: partnerId });
      expect(res.status, res.text).toBe(200);
      return [res.body.preview_subject, res.body.preview_body];
    };

    // No exchange rate yet: per currency only; the one figure is empty, never 17600.00 "EUR".
    expect(await preview(oneFigure.body)).toEqual(['Open  ', 'Overdue  ']);
    const perCurrency = await template(org, f, {
      subject: '{{ totals.open_count }} open',
      body:
        '{% for c in totals.by_currency %}{{ c.currency }} {{ c.open_amount }} ({{ c.overdue_amount }} overdue, {{ c.open_count }}/{{ c.overdue_count }}); {% endfor %}' +
        'base {{ totals.base.open_amount }}/{{ totals.base.overdue_amount }} {{ totals.base.currency }} complete={{ totals.base.complete }} missing={{ totals.base.missing_currencies | join: "," }}' +
        '{% for r in totals.base.rates %} rate {{ r.currency }}={{ r.rate }} {{ r.pair }} {{ r.rate_date }}{% endfor %}' +
        ' | {% for i in invoices %}{{ i.number }} {{ i.amount_open }} {{ i.currency }}; {% endfor %}',
    });
    expect(perCurrency.status, perCurrency.text).toBe(200);
    expect(await preview(perCurrency.body)).toEqual([
      '3 open',
      'EUR 100.00 (100.00 overdue, 1/1); JPY 17500 (15000 overdue, 2/1); base / EUR complete=false missing=JPY | E-1 100.00 EUR; J-1 15000 JPY; J-2 2500 JPY; ',
    ]);

    // With a rate on or before today (stored as EUR/JPY 160, so 1 JPY = 0.00625 EUR), the base figure
    // exists and names the rate; a later rate is not used.
    const rateDate = new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10);
    const rates = await stack.request('PUT', '/v2/exchange-rates', {
      token: org.token,
      body: [
        { base_currency: 'EUR', quote_currency: 'JPY', rate_date: rateDate, rate: '160' },
        { base_currency: 'EUR', quote_currency: 'JPY', rate_date: '2099-01-01', rate: '1' },
      ],
    });
    expect(rates.status, rates.text).toBe(200);
    // 100.00 + 17500 / 160 = 209.375 → 209.38; overdue 100.00 + 15000 / 160 = 193.75
    expect(await preview(oneFigure.body)).toEqual(['Open 209.38 EUR', 'Overdue 193.75 EUR']);
    expect(await preview(perCurrency.body)).toEqual([
      '3 open',
      `EUR 100.00 (100.00 overdue, 1/1); JPY 17500 (15000 overdue, 2/1); base 209.38/193.75 EUR complete=true missing= rate JPY=0.00625 EUR/JPY ${rateDate} | E-1 100.00 EUR; J-1 15000 JPY; J-2 2500 JPY; `,
    ]);
  });
});

describe('totals variables are checked on save like the others', () => {
  it('refuses an unknown field of totals.base, of a totals.by_currency item and of a rate (the rates exist only in the multi-currency sample)', async () => {
    const f = await folder(a, 'Totals checks');
    const base = await template(a, f, { body: '{{ totals.base.sum }}' });
    expect(base.status).toBe(422);
    expect(base.body.message).toMatch(/unknown variable totals\.base\.sum/);
    const item = await template(a, f, { body: '{% for c in totals.by_currency %}{{ c.total }}{% endfor %}' });
    expect(item.status).toBe(422);
    expect(item.body.message).toMatch(/c\.total/);
    const rate = await template(a, f, { body: '{% for r in totals.base.rates %}{{ r.value }}{% endfor %}' });
    expect(rate.status).toBe(422);
    expect(rate.body.message).toMatch(/r\.value/);
    const ok = await template(a, f, { body: '{{ totals.by_currency.size }} {{ totals.base.missing_currencies.size }} {{ totals.base.rates.size }}' });
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('preview hot path', () => {
  it('a PATCHed template previews its new text at once, and its old text again after PATCHing back', async () => {
    const f = await folder(a);
    const t = (await template(a, f, { subject: 'One {{ customer.name }}', body: 'First {{ sender.email }}' })).body;
    const preview = async () => {
      const res = await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, {});
      expect(res.status, res.text).toBe(200);
      return [res.body.preview_subject, res.body.preview_body, res.body.modified_at];
    };
    const me = (await req(a, 'GET', '/v2/users/me')).body;
    const first = await preview();
    expect(first.slice(0, 2)).toEqual(['One Sample Customer GmbH', `First ${me.email}`]);
    expect(await preview()).toEqual(first); // served from the parsed-template cache
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { body: 'Second {{ organization.name }}' })).status).toBe(200);
    expect((await preview()).slice(0, 2)).toEqual(['One Sample Customer GmbH', 'Second Templates A']);
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { subject: 'Two {{ customer.account_number }}' })).status).toBe(200);
    expect((await preview()).slice(0, 2)).toEqual(['Two C-0001', 'Second Templates A']);
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { subject: 'One {{ customer.name }}', body: 'First {{ sender.email }}' })).status).toBe(200);
    const back = await preview();
    expect(back.slice(0, 2)).toEqual(first.slice(0, 2));
    expect(back[2]).not.toBe(first[2]);
    // the preview answers the whole template, attachments included (read in the same query)
    const att = await req(a, 'POST', `/v1/email-templates/${t.id}/attachments`, { name: 'terms.pdf', mime_type: 'application/pdf', size: 10 });
    expect(att.status, att.text).toBe(200);
    const withAttachment = await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, {});
    expect(withAttachment.body.attachments.map((x: any) => x.id)).toEqual([att.body.id]);
    expect(withAttachment.body).toMatchObject({ folder_id: f, folder: { id: f }, attachments: [{ name: 'terms.pdf', size: 10, is_verified: false, organization_id: a.organizationId }] });
    expect(withAttachment.body.attachments[0].created_at).toMatch(/Z$/);
    // another organization's template stays unknown
    expect((await req(b, 'POST', `/v1/email-templates/${t.id}/preview`, {})).status).toBe(404);
  });

  it('the parsed-template cache is keyed by template id and modified_at (and the text), and bounded', () => {
    const cache = new ParsedTemplateCache(2);
    const at = new Date('2026-01-01T00:00:00.000Z');
    const first = cache.get('t1', 'body', at, 'Hello {{ customer.name }}');
    expect(cache.get('t1', 'body', new Date(at.getTime()), 'Hello {{ customer.name }}')).toBe(first); // hit
    // a later save with the same text is parsed again (modified_at is part of the key) ...
    const later = cache.get('t1', 'body', new Date(at.getTime() + 1), 'Hello {{ customer.name }}');
    expect(later).not.toBe(first);
    // ... and so is different text under the same modified_at
    expect(cache.get('t1', 'body', new Date(at.getTime() + 1), 'Bye {{ customer.name }}')).not.toBe(later);
    // least recently used entries go first
    const other = cache.get('t2', 'body', at, 'x');
    cache.get('t1', 'body', new Date(at.getTime() + 1), 'Bye {{ customer.name }}');
    cache.get('t3', 'body', at, 'y');
    expect(cache.size).toBe(2);
    expect(cache.get('t2', 'body', at, 'x')).not.toBe(other);
  });

  it('collections writes and previews are answered without the credential-cache sync; an API-key change is not', async () => {
    const syncs = async () => {
      const res = await stack.request('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
      const m = /^gateway_credential_syncs_total(?:\{[^}]*\})? (\d+)$/m.exec(res.text);
      return m ? Number(m[1]) : 0;
    };
    const before = await syncs();
    const f = await folder(a, 'No sync');
    const t = (await template(a, f)).body;
    expect((await req(a, 'POST', `/v1/email-templates/${t.id}/preview`, {})).status).toBe(200);
    expect((await req(a, 'PATCH', `/v1/email-templates/${t.id}`, { name: 'Renamed' })).status).toBe(200);
    expect(await syncs()).toBe(before);
    const key = await req(a, 'POST', '/v2/api-keys', { name: 'sync check' });
    expect(key.status, key.text).toBe(200);
    expect(await syncs()).toBe(before + 1);
  });
});

describe('attachments through presigned URLs', () => {
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

  async function newAttachment(mime: string, size: number) {
    const f = await folder(a);
    const t = (await template(a, f)).body.id;
    const res = await req(a, 'POST', `/v1/email-templates/${t}/attachments`, { name: 'logo.png', mime_type: mime, size });
    expect(res.status, res.text).toBe(200);
    return { t, att: res.body };
  }

  it('uploads through the presigned PUT, verifies server-side, and serves a fresh presigned GET', async () => {
    const { t, att } = await newAttachment('image/png', PNG.length);
    expect(att).toMatchObject({ object: 'email_template_attachment', is_verified: false, size: PNG.length, mime_type: 'image/png', file_type: 'image', organization_id: a.organizationId, user_id: a.userId });
    expect(att.upload.headers).toEqual({ 'content-type': 'image/png', 'content-length': String(PNG.length) });
    // nothing uploaded yet
    expect((await req(a, 'POST', `/v1/email-templates/${t}/attachments/${att.id}/complete`)).status).toBe(409);
    const put = await fetch(att.upload.url, { method: 'PUT', body: PNG, headers: { 'content-type': 'image/png' } });
    expect(put.status).toBe(200);
    const done = await req(a, 'POST', `/v1/email-templates/${t}/attachments/${att.id}/complete`);
    expect(done.body).toMatchObject({ is_verified: true, verification_error: null });

    const got = (await req(a, 'GET', `/v1/email-templates/${t}`)).body.attachments[0];
    expect(got.is_verified).toBe(true);
    expect(Date.parse(got.presigned_url_expires_at)).toBeGreaterThan(Date.now());
    const download = await fetch(got.presigned_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(PNG)).toBe(true);

    expect((await req(a, 'DELETE', `/v1/email-templates/${t}/attachments/${att.id}`)).status).toBe(204);
    expect((await req(a, 'GET', `/v1/email-templates/${t}`)).body.attachments).toEqual([]);
    const after = await fetch(got.presigned_url);
    await after.arrayBuffer();
    expect(after.status).toBe(404); // the stored file went with it
  });

  it('refuses a tampered signature and another size or type at the storage (403)', async () => {
    const { att } = await newAttachment('image/png', PNG.length);
    const u = new URL(att.upload.url);
    const sig = u.searchParams.get('X-Amz-Signature')!;
    u.searchParams.set('X-Amz-Signature', (sig[0] === '0' ? '1' : '0') + sig.slice(1));
    const tampered = await fetch(u, { method: 'PUT', body: PNG, headers: { 'content-type': 'image/png' } });
    expect(tampered.status).toBe(403);
    const bigger = await fetch(att.upload.url, { method: 'PUT', body: Buffer.concat([PNG, PNG]), headers: { 'content-type': 'image/png' } });
    expect(bigger.status).toBe(403);
    const otherType = await fetch(att.upload.url, { method: 'PUT', body: PNG, headers: { 'content-type': 'text/html' } });
    expect(otherType.status).toBe(403);
  });

  it('leaves an attachment whose bytes are not its declared type unverified', async () => {
    const bytes = Buffer.from('<html><script>alert(1)</script></html>');
    const { t, att } = await newAttachment('image/png', bytes.length);
    expect((await fetch(att.upload.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'image/png' } })).status).toBe(200);
    const done = await req(a, 'POST', `/v1/email-templates/${t}/attachments/${att.id}/complete`);
    expect(done.status).toBe(200);
    expect(done.body.is_verified).toBe(false);
    expect(done.body.verification_error).toMatch(/not image\/png/);
  });

  it('validates the declaration', async () => {
    const f = await folder(a);
    const t = (await template(a, f)).body.id;
    expectV1Validation(await req(a, 'POST', `/v1/email-templates/${t}/attachments`, { name: 'x', mime_type: 'image/png', size: 0 }), 'body', 'size');
    expectV1Validation(await req(a, 'POST', `/v1/email-templates/${t}/attachments`, { name: 'x', mime_type: 'image/png', size: 25 * 1024 * 1024 + 1 }), 'body', 'size');
    expectV1Validation(await req(a, 'POST', `/v1/email-templates/${t}/attachments`, { name: 'x', mime_type: 'png', size: 10 }), 'body', 'mime_type');
  });
});

describe('tenant isolation', () => {
  it("never shows or changes another organization's folders, templates or attachments", async () => {
    const f = await folder(a, 'Private');
    const t = (await template(a, f)).body.id;
    const att = (await req(a, 'POST', `/v1/email-templates/${t}/attachments`, { name: 'n.txt', mime_type: 'text/plain', size: 3 })).body.id;
    const calls: Array<[string, string, unknown?]> = [
      ['GET', `/v1/email-template-folders/${f}`],
      ['PATCH', `/v1/email-template-folders/${f}`, { name: 'Stolen' }],
      ['DELETE', `/v1/email-template-folders/${f}?cascade=true`],
      ['GET', `/v1/email-templates/${t}`],
      ['PATCH', `/v1/email-templates/${t}`, { name: 'Stolen' }],
      ['POST', `/v1/email-templates/${t}/preview`, {}],
      ['POST', `/v1/email-templates/${t}/attachments`, { name: 'x', mime_type: 'text/plain', size: 3 }],
      ['POST', `/v1/email-templates/${t}/attachments/${att}/complete`],
      ['DELETE', `/v1/email-templates/${t}/attachments/${att}`],
      ['DELETE', `/v1/email-templates/${t}`],
    ];
    for (const [method, path, body] of calls) expect((await req(b, method, path, body)).status, `${method} ${path}`).toBe(404);
    const bFolder = await folder(b);
    expect((await template(b, bFolder)).status).toBe(200);
    expect((await req(b, 'POST', '/v1/email-templates', { folder_id: f, name: 'x', subject: 'x', body: 'x' })).status).toBe(404);
    expect((await req(b, 'GET', '/v1/email-template-folders')).body.data.map((x: any) => x.id)).not.toContain(f);
    const mine = await req(a, 'GET', `/v1/email-templates/${t}`);
    expect(mine.body).toMatchObject({ name: 'First reminder', folder: { name: 'Private' } });
    expect(mine.body.attachments.map((x: any) => x.id)).toEqual([att]);
  });
});
