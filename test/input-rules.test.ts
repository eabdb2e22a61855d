/**
 * Hostile input never reaches the database as a 500, end to end through the
 * gateway as an API client: NUL (U+0000) in strings and keys on every kind of stored resource
 * (422 with the `loc`; per record on the middleware pushes), lone UTF-16 surrogates the same way
 * (and URL escapes that are not UTF-8), ids validated as ids, emails to RFC
 * limits (no welcome email to an impossible address), and 405 answers whose `Allow` lists only the
 * methods that work, checked generically over every route declaration of the merged OpenAPI.
 * The kit-level rules on their own: packages/platform/test/input-rules.test.ts.
 * SQL is only read here, to check what was (not) stored where no endpoint lists it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitForMail, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  // The generic 405 walk sends a few hundred requests: no rate limit for this file.
  stack = await startStack({ workers: ['admin'], env: { RATE_LIMIT_PER_SECOND: '0' } });
  org = await stack.onboard('Input Rules Org');
});
afterAll(async () => stack?.close());

const NUL = '\u0000';
const req = (method: string, path: string, body?: unknown) => stack.request(method, path, { token: org.token, body });

/** A 422 request-validation answer naming `loc` (v2 shape). */
function expectNulRefused(res: { status: number; body: any }, loc: (string | number)[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toMatchObject({ type: 'request-validation', status: 422, title: 'Request validation failed' });
  expect(res.body.errors).toContainEqual({ loc, msg: expect.stringContaining('NUL'), type: 'nul_character' });
}

describe('NUL (U+0000) is refused with 422 and its loc, nothing stored', () => {
  it('business units, users, API keys', async () => {
    expectNulRefused(await req('POST', '/v2/business-units', { name: `Unit${NUL}` }), ['body', 'name']);
    expectNulRefused(await req('POST', '/v2/business-units', { name: 'Fine unit', description: `d${NUL}` }), ['body', 'description']);
    expectNulRefused(await req('POST', '/v2/users', { email: 'nul.user@example.com', name: `Nu${NUL}l` }), ['body', 'name']);
    expectNulRefused(await req('POST', '/v2/api-keys', { name: `key${NUL}` }), ['body', 'name']);
    expect(await stack.sql(`SELECT 1 FROM admin.business_units WHERE organization_id = $1 AND name = 'Fine unit'`, [org.organizationId])).toEqual([]);
    expect(await stack.sql(`SELECT 1 FROM admin.users WHERE email = 'nul.user@example.com'`)).toEqual([]);
  });

  it('ledger accounts and adjustments (create and patch)', async () => {
    expectNulRefused(await req('POST', '/v2/adjustments/ledger-accounts', { name: `Fees${NUL}`, number: '6999' }), ['body', 'name']);
    expectNulRefused(await req('POST', '/v2/adjustments/ledger-accounts', { name: 'Fees', number: `69${NUL}` }), ['body', 'number']);
    expectNulRefused(
      await req('POST', '/v2/adjustments', { name: 'Rebate', description: `x${NUL}`, ledger_account: { name: 'Rebates', number: '4911' } }),
      ['body', 'description'],
    );
    const created = await req('POST', '/v2/adjustments', { name: 'Rebate', ledger_account: { name: 'Rebates', number: '4911' } });
    expect(created.status).toBe(200);
    expectNulRefused(await req('PATCH', `/v2/adjustments/${created.body.id}`, { name: `Re${NUL}bate` }), ['body', 'name']);
    expect((await req('GET', `/v2/adjustments/${created.body.id}`)).body.name).toBe('Rebate');
  });

  it('connections: name, settings values and settings keys', async () => {
    expectNulRefused(await req('POST', '/v2/integrations/connections', { provider_name: 'middleware', name: `SAP${NUL}` }), ['body', 'name']);
    expectNulRefused(
      await req('POST', '/v2/integrations/connections', { provider_name: 'acumatica', name: 'Acu', settings: { base_url: 'https://erp.example.com', tenant: `Co${NUL}` } }),
      ['body', 'settings', 'tenant'],
    );
    const key = await req('POST', '/v2/integrations/connections', { provider_name: 'acumatica', name: 'Acu', settings: { [`ten${NUL}ant`]: 'Company' } });
    expect(key.status).toBe(422);
    expect(key.body.errors).toContainEqual({ loc: ['body', 'settings', `ten${NUL}ant`], msg: expect.stringContaining('keys'), type: 'nul_character' });
    const listed = await req('GET', '/v2/integrations/connections');
    expect(listed.body.total_records).toBe(0);
  });

  it('remittances: JSON (v1 validation shape) and CSV text bodies', async () => {
    const json = await req('POST', '/v1/remittances', { payer_name: `ACME${NUL}`, allocations: [{ invoice_number: '9000001', amount_paid: 10 }] });
    expect(json.status).toBe(422);
    expect(json.body).toEqual({ detail: { body: { payer_name: [expect.stringContaining('NUL')] } }, message: expect.any(String) });
    const nested = await req('POST', '/v1/remittances', { allocations: [{ invoice_number: `900${NUL}1`, amount_paid: 10 }] });
    expect(nested.body.detail.body['allocations.0.invoice_number']).toEqual([expect.stringContaining('NUL')]);
    const csv = await stack.request('POST', '/v1/remittances/csv', { token: org.token, rawBody: `invoice,paid\n900${NUL}1,5\n`, headers: { 'content-type': 'text/csv' } });
    expect(csv.status).toBe(422);
    expect(csv.body.detail.body.__root__).toEqual([expect.stringContaining('NUL')]);
    const query = await stack.request('POST', `/v1/remittances/csv?payer_name=A%00B`, { token: org.token, rawBody: 'invoice,paid\n9000001,5\n', headers: { 'content-type': 'text/csv' } });
    expect(query.status).toBe(422);
    expect(query.body.detail.query.payer_name).toEqual([expect.stringContaining('NUL')]);
    expect((await req('GET', '/v1/remittances')).body.total_records).toBe(0);
  });

  it('JSON bank statements', async () => {
    const statement = {
      account: 'DE89370400440532013000',
      currency: 'EUR',
      transactions: [
        { amount: '10.00', booking_date: '2026-11-10', counterparty_name: 'Fine payer', remittance_information: 'INV-1' },
        { amount: '11.00', booking_date: '2026-11-10', counterparty_name: `Bad${NUL}payer`, remittance_information: 'INV-2' },
      ],
    };
    expectNulRefused(await req('POST', '/v2/bank-statements', statement), ['body', 'transactions', 1, 'counterparty_name']);
    expect((await req('GET', '/v2/bank-statements')).body.total_records).toBe(0);
  });

  it('uploaded statement files (a NUL byte, with its line) and the multipart mapping (also as a JSON escape)', async () => {
    const mapping = { account: 'DE89370400440532013000', date_column: 'Date', amount_column: 'Amount', currency: 'EUR', counterparty_name_column: 'Name', delimiter: ';', decimal_separator: ',', date_format: 'DD.MM.YYYY' };
    const upload = async (csv: string, map: string) => {
      const form = new FormData();
      form.set('format', 'csv');
      form.set('mapping', map);
      form.set('file', new Blob([csv]), 'statement.csv');
      const res = await fetch(`${stack.gatewayUrl}/v2/bank-statements`, { method: 'POST', headers: { authorization: `Bearer ${org.token}` }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const good = 'Date;Amount;Name\n04.11.2026;10,00;Fine payer\n';
    expectNulRefused(await upload(`${good}05.11.2026;11,00;Bad${NUL}payer\n`, JSON.stringify(mapping)), ['body', 'file', 'line 3']);
    // The mapping is JSON text: an escaped \u0000 becomes a NUL only once parsed.
    expectNulRefused(await upload(good, JSON.stringify({ ...mapping, account: `DE89${NUL}` }).replace('\\u0000', NUL)), ['body', 'mapping']); // a raw NUL in the text field
    expectNulRefused(await upload(good, `${JSON.stringify(mapping).slice(0, -1)},"delimiter":";","account":"DE\\u0000"}`), ['body', 'mapping', 'account']);
    expect((await req('GET', '/v2/bank-statements')).body.total_records).toBe(0);
  });

  it('path and query strings', async () => {
    expectNulRefused(await req('GET', `/v2/integrations/connections/${randomUUID()}/sync-runs?model=cust%00omers`), ['query', 'model']);
    expectNulRefused(await req('GET', '/v2/users/%00'), ['path', 'user_id']);
  });
});

const HIGH = '\ud800';
const LOW = '\udc00';

/** A 422 request-validation answer naming `loc` for a lone surrogate (v2 shape). */
function expectSurrogateRefused(res: { status: number; body: any }, loc: (string | number)[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(422);
  expect(res.body).toMatchObject({ type: 'request-validation', status: 422, title: 'Request validation failed' });
  expect(res.body.errors).toContainEqual({ loc, msg: expect.stringContaining('lone UTF-16 surrogate'), type: 'lone_surrogate' });
}

describe('lone UTF-16 surrogates (JSON "\\ud800") are refused with 422 and their loc, nothing stored', () => {
  // stack.request sends JSON.stringify's text: a lone surrogate goes out as the escape "\ud800".
  it('remittance allocations (values and keys; the v1 validation shape)', async () => {
    const remittance = (allocation: Record<string, unknown>) => ({ payer_name: 'ACME', allocations: [{ invoice_number: '9000001', amount_paid: 10 }, allocation] });
    const value = await req('POST', '/v1/remittances', remittance({ invoice_number: `90${HIGH}02`, amount_paid: 5 }));
    expect(value.status, value.text).toBe(422);
    expect(value.body).toEqual({ detail: { body: { 'allocations.1.invoice_number': [expect.stringContaining('lone UTF-16 surrogate')] } }, message: expect.any(String) });
    const key = await req('POST', '/v1/remittances', remittance({ invoice_number: '9000002', amount_paid: 5, [`memo${LOW}`]: 'x' }));
    expect(key.status, key.text).toBe(422);
    expect(key.body.detail.body[`allocations.1.memo${LOW}`]).toEqual([expect.stringContaining('lone UTF-16 surrogate')]);
    const payer = await req('POST', '/v1/remittances', { payer_name: `ACME${LOW}`, allocations: [{ invoice_number: '9000001', amount_paid: 10 }] });
    expect(payer.status, payer.text).toBe(422);
    expect(payer.body.detail.body.payer_name).toEqual([expect.stringContaining('lone UTF-16 surrogate')]);
    expect((await req('GET', '/v1/remittances')).body.total_records).toBe(0);
  });

  it('customer segment and tag conditions', async () => {
    expectSurrogateRefused(
      await req('POST', '/v2/customer-segments', { name: 'Surrogates', priority: 77, conditions: { field: 'name', op: 'eq', value: `Alpha${HIGH}` } }),
      ['body', 'conditions', 'value'],
    );
    expectSurrogateRefused(await req('POST', '/v2/customer-segments', { name: `Seg${HIGH}ment`, priority: 78, conditions: { field: 'country', op: 'eq', value: 'DE' } }), ['body', 'name']);
    expect((await req('GET', '/v2/customer-segments')).body.data.filter((s: any) => s.priority === 77 || s.priority === 78)).toEqual([]);
  });

  it('connection settings values and keys', async () => {
    expectSurrogateRefused(
      await req('POST', '/v2/integrations/connections', { provider_name: 'acumatica', name: 'Acu surrogate', settings: { base_url: 'https://erp.example.com', tenant: `Co${HIGH}` } }),
      ['body', 'settings', 'tenant'],
    );
    const key = await req('POST', '/v2/integrations/connections', { provider_name: 'acumatica', name: 'Acu surrogate', settings: { [`ten${LOW}ant`]: 'Company' } });
    expect(key.status).toBe(422);
    expect(key.body.errors).toContainEqual({ loc: ['body', 'settings', `ten${LOW}ant`], msg: expect.stringContaining('keys'), type: 'lone_surrogate' });
    expect((await req('GET', '/v2/integrations/connections')).body.data.filter((c: any) => c.name === 'Acu surrogate')).toEqual([]);
  });

  it('a surrogate pair (an emoji) is text and is stored as sent', async () => {
    const res = await req('POST', '/v2/business-units', { name: 'Unit \ud83d\ude00' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.name).toBe('Unit \u{1F600}');
  });

  it('path and query: escapes that are not UTF-8 (%ED%A0%80 encodes a surrogate) are refused, not read as U+FFFD', async () => {
    const query = await req('GET', `/v2/integrations/connections/${randomUUID()}/sync-runs?model=cust%ED%A0%80omers`);
    expect(query.status, query.text).toBe(422);
    expect(query.body.errors).toContainEqual({ loc: ['query', 'model'], msg: expect.stringContaining('UTF-8'), type: 'invalid_utf8' });
    const v1 = await stack.request('POST', '/v1/remittances/csv?payer_name=A%FFB', { token: org.token, rawBody: 'invoice,paid\n9000001,5\n', headers: { 'content-type': 'text/csv' } });
    expect(v1.status, v1.text).toBe(422);
    expect(v1.body.detail.query.payer_name).toEqual([expect.stringContaining('UTF-8')]);
    const path = await req('GET', '/v2/users/%ED%A0%80');
    expect(path.status, path.text).toBe(422);
    expect(path.body.errors).toContainEqual({ loc: ['path', 'user_id'], msg: expect.stringContaining('UTF-8'), type: 'invalid_utf8' });
    expect((await req('GET', '/v1/remittances')).body.total_records).toBe(0);
  });
});

describe('middleware pushes refuse the NUL record alone', () => {
  it('customers: one bad record of three, the two others stored', async () => {
    const code = `NUL-C-${Date.now()}`;
    const res = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: `${code}-1` }),
      customerRecord({ customer_code: `${code}-2`, city1: `Ber${NUL}lin` }),
      customerRecord({ customer_code: `${code}-3` }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => [r.remote_id, r.success, r.error_code])).toEqual([
      [`${code}-1`, true, null],
      [`${code}-2`, false, 'invalid_field'],
      [`${code}-3`, true, null],
    ]);
    expect(res.body.results[1]!.message).toBe('city1 contains the NUL character (U+0000)');
    const stored = await stack.sql(`SELECT remote_id FROM integrations.partners WHERE organization_id = $1 AND remote_id LIKE $2 ORDER BY remote_id`, [org.organizationId, `${code}-%`]);
    expect(stored.map((r) => r.remote_id)).toEqual([`${code}-1`, `${code}-3`]);
  });

  it('invoices: a NUL in a line item value or an ignored field\'s key refuses that record only', async () => {
    const doc = `NULI${Date.now().toString(36)}`;
    const base = invoiceRecord({ document_number: `${doc}1` });
    const res = await pushInvoices(stack, org.apiKey, [
      base,
      invoiceRecord({ document_number: `${doc}2`, line_items: [{ ...base.line_items[0]!, description: `Wid${NUL}gets` }] }),
      invoiceRecord({ document_number: `${doc}3`, [`x${NUL}`]: 'ignored field' }),
      invoiceRecord({ document_number: `${doc}4` }),
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => [r.remote_id, r.success, r.error_code])).toEqual([
      [`${doc}1`, true, null],
      [`${doc}2`, false, 'invalid_field'],
      [`${doc}3`, false, 'invalid_field'],
      [`${doc}4`, true, null],
    ]);
    expect(res.body.results[1]!.message).toBe('line_items[0].description contains the NUL character (U+0000)');
    expect(res.body.results[2]!.message).toBe(`x${NUL} is a key that contains the NUL character (U+0000)`);
    const stored = await stack.sql(`SELECT document_number FROM integrations.documents WHERE organization_id = $1 AND document_number LIKE $2 ORDER BY 1`, [org.organizationId, `${doc}%`]);
    expect(stored.map((r) => r.document_number)).toEqual([`${doc}1`, `${doc}4`]);
  });
});

describe('ids are validated as ids (422), in path, query and body', () => {
  it('POST /v2/users with a business_unit_ids item that is not a UUID', async () => {
    const res = await req('POST', '/v2/users', { email: 'bu.ids@example.com', name: 'Bea', business_unit_ids: ['not-a-uuid'] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ loc: ['body', 'business_unit_ids', 0], msg: 'must be a UUID', type: 'invalid_format' }]);
    expect(await stack.sql(`SELECT 1 FROM admin.users WHERE email = 'bu.ids@example.com'`)).toEqual([]);
  });

  it('a sample of path, query and body ids', async () => {
    const cases: [string, string, unknown, (string | number)[]][] = [
      ['GET', '/v2/users/not-a-uuid', undefined, ['path', 'user_id']],
      ['GET', '/v2/business-units/123', undefined, ['path', 'business_unit_id']],
      ['DELETE', '/v2/api-keys/key-1', undefined, ['path', 'api_key_id']],
      ['GET', '/v2/integrations/connections/c0ffee', undefined, ['path', 'connection_id']],
      ['POST', '/v2/payments/0193a0c4-1f2e-7abc-8def-0123456789a/approve', undefined, ['path', 'payment_id']],
      ['GET', '/v2/cash-app/outreach?payment_id=nope', undefined, ['query', 'payment_id']],
      ['POST', '/v2/cash-app/outreach/payment-receipt', { payment_id: 'nope' }, ['body', 'payment_id']],
      ['POST', '/v2/integrations/connections', { provider_name: 'middleware', name: 'x', business_unit_id: 'nope' }, ['body', 'business_unit_id']],
    ];
    for (const [method, path, body, loc] of cases) {
      const res = await req(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(res.body.errors, `${method} ${path}`).toContainEqual({ loc, msg: 'must be a UUID', type: 'invalid_format' });
    }
    // v1 routes keep their v1 validation shape
    const v1 = await req('GET', '/v1/remittances/not-a-uuid');
    expect(v1.status).toBe(422);
    expect(v1.body.detail.path.remittance_id).toEqual(['must be a UUID']);
  });
});

describe('emails to RFC limits', () => {
  it('refuses a 65-character local part (422) and sends no welcome email; 64 is accepted and emailed', async () => {
    const tooLong = `${'l'.repeat(65)}@example.com`;
    const refused = await req('POST', '/v2/users', { email: tooLong, name: 'Lou Long' });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ loc: ['body', 'email'], msg: expect.stringContaining('local part of at most 64'), type: 'invalid_format' }]);
    const longest = `${'m'.repeat(64)}@example.com`;
    const accepted = await req('POST', '/v2/users', { email: longest, name: 'Max Local' });
    expect(accepted.status).toBe(200);
    // The worker is up and delivering (the 64-character address got its email) ...
    expect(await waitForMail(longest)).toHaveLength(1);
    // ... and nothing was ever sent to the impossible one.
    expect(await waitForMail(tooLong, { timeoutMs: 1000 })).toEqual([]);
    expect(await stack.sql(`SELECT 1 FROM admin.users WHERE email = $1`, [tooLong])).toEqual([]);
  });

  it('applies the same rule on every route that takes an email', async () => {
    const remittance = await req('POST', '/v1/remittances', { payer_email: `${'p'.repeat(65)}@example.com`, allocations: [{ invoice_number: '1', amount_paid: 1 }] });
    expect(remittance.status).toBe(422);
    expect(Object.keys(remittance.body.detail.body)).toEqual(['payer_email']);
    const customers = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: `MAIL-${Date.now()}`, smtp_addr: `${'s'.repeat(65)}@example.com` })]);
    expect(customers.body.results[0]).toMatchObject({ success: false, error_code: 'invalid_email' });
  });
});

describe('405 and Allow: only methods that work, fixed segments win', () => {
  it('/v2/adjustments/ledger-accounts does not take PATCH or DELETE of /v2/adjustments/{id}', async () => {
    for (const method of ['PATCH', 'DELETE']) {
      const res = await req(method, '/v2/adjustments/ledger-accounts', method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('GET, POST');
      expect(res.body).toMatchObject({ type: 'method-not-allowed', status: 405 });
    }
  });

  it('/v2/cash-app/outreach/payment-receipt does not advertise GET', async () => {
    const res = await req('GET', '/v2/cash-app/outreach/payment-receipt');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('every declared method works on every declared path, and 405 Allow lists exactly the most specific declaration\'s methods', async () => {
    const doc = (await stack.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const templates = Object.entries(doc.paths).map(([path, ops]) => ({
      path,
      segments: path.split('/').slice(1).map((s) => (s.startsWith('{') ? null : s)),
      methods: Object.keys(ops).map((m) => m.toUpperCase()).filter((m) => METHODS.includes(m)),
    }));
    expect(templates.length).toBeGreaterThan(30);
    // The most specific template matching a concrete path: fixed segments beat captures, left to right.
    const mostSpecific = (concrete: string) => {
      const parts = concrete.split('/').slice(1);
      const matching = templates.filter((t) => t.segments.length === parts.length && t.segments.every((s, i) => s === null || s === parts[i]));
      matching.sort((a, b) => {
        for (let i = 0; i < a.segments.length; i++) {
          if ((a.segments[i] === null) !== (b.segments[i] === null)) return a.segments[i] === null ? 1 : -1;
        }
        return 0;
      });
      return matching[0]!;
    };
    const problems: string[] = [];
    let overlaps = 0;
    for (const t of templates) {
      const concrete = '/' + t.segments.map((s) => s ?? randomUUID()).join('/');
      const winner = mostSpecific(concrete);
      expect(winner.path).toBe(t.path);
      if (t.segments.some((s) => s !== null) && templates.some((o) => o !== t && o.segments.length === t.segments.length && o.segments.every((s, i) => s === null || s === t.segments[i]))) overlaps++;
      for (const method of METHODS) {
        const res = await req(method, concrete);
        if (t.methods.includes(method)) {
          if (res.status === 405 || res.body?.type === 'route-not-found' || res.status >= 500) problems.push(`${method} ${t.path}: declared, answered ${res.status} ${res.body?.type}`);
        } else {
          const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();
          if (res.status !== 405 || allow.join() !== [...t.methods].sort().join()) problems.push(`${method} ${t.path}: undeclared, answered ${res.status} Allow [${allow.join()}] (declared [${t.methods.join()}])`);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(overlaps).toBeGreaterThanOrEqual(3); // ledger-accounts, payment-receipt, users/me at least
  });
});
