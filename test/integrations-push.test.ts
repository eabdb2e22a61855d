/**
 * Middleware push of invoices/credit memos and customers (spec rows 24 and 25, rules 4.3.16 and
 * 4.3.17), end to end through the gateway with organization API keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Org, type TestStack } from './support/stack.js';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';

let stack: TestStack;
let org: Org;

beforeAll(async () => {
  stack = await startStack();
  org = await stack.onboard();
});
afterAll(async () => stack?.close());

let seq = 0;
/** A fresh document number per test so tests never see each other's rows. */
const docNo = () => `T${Date.now().toString(36)}${(seq++).toString().padStart(4, '0')}`;

async function documentsOf(organizationId: string, numbers: string[]) {
  return stack.sql(
    `SELECT id, kind, partner_id, customer_code, company_code, fiscal_year, document_number, currency, document_date::text, net_due_date::text,
            clearing_date::text, amount_in_document_currency::text, amount_in_local_currency::text, amount_open::text, status_open,
            reference, assignment, business_unit_id, origin, remote_id
       FROM integrations.documents WHERE organization_id = $1 AND document_number = ANY($2) ORDER BY document_number`,
    [organizationId, numbers],
  );
}

async function lineItemsOf(documentId: string) {
  return stack.sql(
    `SELECT line_number, description, quantity::text, unit_amount::text, total_amount::text FROM integrations.line_items WHERE document_id = $1 ORDER BY line_number`,
    [documentId],
  );
}

describe('request-level validation', () => {
  it('refuses 101 records with 422 and stores none of them', async () => {
    const prefix = docNo();
    const records = Array.from({ length: 101 }, (_, i) => invoiceRecord({ document_number: `${prefix}-${i}` }));
    const res = await pushInvoices(stack, org.apiKey, records);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation', status: 422 });
    expect((res.body as unknown as { errors: { loc: unknown[] }[] }).errors[0]!.loc).toEqual(['body']);
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM integrations.documents WHERE organization_id = $1 AND document_number LIKE $2`, [
      org.organizationId,
      `${prefix}-%`,
    ]);
    expect(n).toBe(0);
    const customers = await pushCustomers(stack, org.apiKey, Array.from({ length: 101 }, (_, i) => customerRecord({ customer_code: `${prefix}-${i}` })));
    expect(customers.status).toBe(422);
    const [{ p }] = await stack.sql(`SELECT count(*)::int AS p FROM integrations.partners WHERE organization_id = $1 AND remote_id LIKE $2`, [
      org.organizationId,
      `${prefix}-%`,
    ]);
    expect(p).toBe(0);
  });

  it('accepts exactly 100 records', async () => {
    const prefix = docNo();
    const res = await pushInvoices(stack, org.apiKey, Array.from({ length: 100 }, (_, i) => invoiceRecord({ document_number: `${prefix}-${i}` })));
    expect(res.status).toBe(200);
    expect(res.body.results).toHaveLength(100);
    expect(res.body.results.every((r) => r.success)).toBe(true);
    expect(new Set(res.body.results.map((r) => r.service_id)).size).toBe(100);
  });

  it.each([
    ['an object', { document_number: '1' }],
    ['a string', 'invoices'],
    ['null', null],
  ])('refuses a body that is %s with 422', async (_label, body) => {
    const res = await pushInvoices(stack, org.apiKey, body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'request-validation' });
    expect((await pushCustomers(stack, org.apiKey, body)).status).toBe(422);
  });

  it('answers an empty array with empty results', async () => {
    const res = await pushInvoices(stack, org.apiKey, []);
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([]);
    expect(Date.parse(res.body.received_at)).not.toBeNaN();
    expect(res.body.received_at).toMatch(/Z$/);
  });
});

describe('credentials', () => {
  it('refuses a user access token with 403 and accepts the organization API key', async () => {
    const record = invoiceRecord({ document_number: docNo() });
    const asUser = await pushInvoices(stack, org.token, [record]);
    expect(asUser.status).toBe(403);
    expect(asUser.body).toMatchObject({ type: 'forbidden' });
    expect(await documentsOf(org.organizationId, [record.document_number])).toHaveLength(0);
    expect((await pushCustomers(stack, org.token, [customerRecord()])).status).toBe(403);
    expect((await pushInvoices(stack, undefined as unknown as string, [record])).status).toBe(401);
    const asKey = await pushInvoices(stack, org.apiKey, [record]);
    expect(asKey.status).toBe(200);
    expect(asKey.body.results[0].success).toBe(true);
  });
});

describe('per-record validation', () => {
  it('stores the good records of a mixed batch and reports each bad one with its code and field', async () => {
    const good1 = invoiceRecord({ document_number: docNo() });
    const good2 = invoiceRecord({ document_number: docNo(), currency: 'JPY', amount_in_document_currency: 1500, line_items: [] });
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...invoiceRecord({ document_number: docNo() }), company_code: undefined }, 'missing_field', 'company_code'],
      [invoiceRecord({ document_number: docNo(), customer_code: '' }), 'missing_field', 'customer_code'],
      [invoiceRecord({ document_number: docNo(), fiscal_year: 2026 as unknown as string }), 'invalid_field', 'fiscal_year'],
      [invoiceRecord({ document_number: docNo(), status_open: 'yes' as unknown as boolean }), 'invalid_field', 'status_open'],
      [invoiceRecord({ document_number: docNo(), currency: 'XXY' }), 'invalid_currency', 'currency'],
      [invoiceRecord({ document_number: docNo(), currency: 'eur' }), 'invalid_currency', 'currency'],
      [invoiceRecord({ document_number: docNo(), net_due_date: '2026-02-30' }), 'invalid_date', 'net_due_date'],
      [invoiceRecord({ document_number: docNo(), document_date: '01.09.2026' }), 'invalid_date', 'document_date'],
      [invoiceRecord({ document_number: docNo(), clearing_date: '2026-13-01' }), 'invalid_date', 'clearing_date'],
      [invoiceRecord({ document_number: docNo(), amount_in_document_currency: 10.123 }), 'invalid_amount', 'amount_in_document_currency'],
      [invoiceRecord({ document_number: docNo(), amount_in_document_currency: 'ten' as unknown as number }), 'invalid_amount', 'amount_in_document_currency'],
      [invoiceRecord({ document_number: docNo(), currency: 'JPY', amount_in_document_currency: 100.5, line_items: [] }), 'invalid_amount', 'amount_in_document_currency'],
      [invoiceRecord({ document_number: docNo(), amount_in_local_currency: 1.005 }), 'invalid_amount', 'amount_in_local_currency'],
      [
        invoiceRecord({ document_number: docNo(), line_items: [{ line_number: 1, description: 'x', quantity: 1, unit_amount: 1, total_amount: 1.234 }] }),
        'invalid_amount',
        'line_items[0].total_amount',
      ],
      [
        invoiceRecord({
          document_number: docNo(),
          line_items: [
            { line_number: 1, description: 'a', quantity: 1, unit_amount: 1, total_amount: 1 },
            { line_number: 1, description: 'b', quantity: 1, unit_amount: 1, total_amount: 1 },
          ],
        }),
        'invalid_field',
        'line_items[1].line_number',
      ],
      [invoiceRecord({ document_number: docNo(), debit_credit_indicator: 'X' }), 'invalid_debit_credit_indicator', 'debit_credit_indicator'],
      [{ ...invoiceRecord({ document_number: docNo() }), debit_credit_indicator: undefined }, 'missing_field', 'debit_credit_indicator'],
      [invoiceRecord({ document_number: docNo(), business_unit_id: 'not-a-unit' }), 'invalid_business_unit', 'business_unit_id'],
      [invoiceRecord({ document_number: docNo(), business_unit_id: '0190a0a0-0000-7000-8000-000000000000' }), 'invalid_business_unit', 'business_unit_id'],
    ];
    const body = [good1, ...cases.map(([r]) => r), 42, good2];
    const res = await pushInvoices(stack, org.apiKey, body);
    expect(res.status).toBe(200);
    const results = res.body.results;
    expect(results).toHaveLength(body.length);
    expect(results[0]).toMatchObject({ success: true, remote_id: good1.document_number, error_code: null, message: null });
    expect(results.at(-1)).toMatchObject({ success: true, remote_id: good2.document_number });
    cases.forEach(([record, code, field], i) => {
      const r = results[i + 1]!;
      expect(r, `${code} ${field}`).toMatchObject({ success: false, service_id: null, error_code: code, remote_id: record.document_number });
      expect(r.message, `${code} ${field}`).toContain(field);
    });
    expect(results.at(-2)).toMatchObject({ success: false, remote_id: null, error_code: 'invalid_record', service_id: null });

    const stored = await documentsOf(org.organizationId, body.flatMap((r) => (typeof r === 'object' && r ? [String(r.document_number)] : [])));
    expect(stored.map((d) => d.document_number).sort()).toEqual([good1.document_number, good2.document_number].sort());
    expect(stored.find((d) => d.document_number === good1.document_number)!.id).toBe(results[0]!.service_id);
    expect(stored.find((d) => d.document_number === good2.document_number)).toMatchObject({ currency: 'JPY', amount_in_document_currency: '1500.0000' });
  });

  it('reports bad customer records with their codes and stores the good ones', async () => {
    const code = docNo();
    const res = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: `${code}-ok` }),
      customerRecord({ customer_code: `${code}-noname`, name1: '' }),
      { ...customerRecord({ customer_code: `${code}-nocode` }), customer_code: undefined },
      customerRecord({ customer_code: `${code}-mail`, smtp_addr: 'not an address' }),
      customerRecord({ customer_code: `${code}-type`, post_code1: 10115 as unknown as string }),
      customerRecord({ customer_code: `${code}-bu`, business_unit_id: '0190a0a0-0000-7000-8000-000000000000' }),
      'C-1',
    ]);
    expect(res.status).toBe(200);
    expect(res.body.results.map((r) => [r.success, r.error_code])).toEqual([
      [true, null],
      [false, 'missing_field'],
      [false, 'missing_field'],
      [false, 'invalid_email'],
      [false, 'invalid_field'],
      [false, 'invalid_business_unit'],
      [false, 'invalid_record'],
    ]);
    expect(res.body.results[1]!.message).toContain('name1');
    expect(res.body.results[2]!.message).toContain('customer_code');
    expect(res.body.results[3]!.message).toContain('smtp_addr');
    expect(res.body.results[4]!.message).toContain('post_code1');
    const rows = await stack.sql(`SELECT remote_id FROM integrations.partners WHERE organization_id = $1 AND remote_id LIKE $2`, [org.organizationId, `${code}-%`]);
    expect(rows.map((r) => r.remote_id)).toEqual([`${code}-ok`]);
  });
});

describe('hostile input, refused per record', () => {
  it('refuses a record carrying a lone surrogate anywhere (values, keys, line items) naming the field; the rest of the batch is stored', async () => {
    const code = docNo();
    const customers = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: `${code}-ok`, name1: 'Ünïcode 😀 GmbH' }),
      customerRecord({ customer_code: `${code}-name`, name1: 'Broken \ud800 name' }),
      customerRecord({ customer_code: `${code}-city`, city1: '\udfffBerlin' }),
      { ...customerRecord({ customer_code: `${code}-key` }), ['extra\udc00']: 'x' },
    ]);
    expect(customers.status, JSON.stringify(customers.body)).toBe(200);
    expect(customers.body.results.map((r) => [r.success, r.error_code])).toEqual([
      [true, null],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
    ]);
    expect(customers.body.results[1]!.message).toContain('name1 contains a lone surrogate');
    expect(customers.body.results[2]!.message).toContain('city1 contains a lone surrogate');
    expect(customers.body.results[3]!.message).toContain('is a key that contains a lone surrogate');
    const partners = await stack.sql(`SELECT remote_id, name FROM integrations.partners WHERE organization_id = $1 AND remote_id LIKE $2`, [org.organizationId, `${code}-%`]);
    expect(partners).toEqual([{ remote_id: `${code}-ok`, name: 'Ünïcode 😀 GmbH' }]);

    const [good, bad] = [docNo(), docNo()];
    const invoices = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: good }),
      invoiceRecord({ document_number: bad, line_items: [{ line_number: 1, description: 'half a pair \ud83d', quantity: 1, unit_amount: 1, total_amount: 1 }] }),
    ]);
    expect(invoices.status, JSON.stringify(invoices.body)).toBe(200);
    expect(invoices.body.results[0]).toMatchObject({ success: true });
    expect(invoices.body.results[1]).toMatchObject({ success: false, error_code: 'invalid_field', remote_id: bad });
    expect(invoices.body.results[1]!.message).toContain('line_items[0].description contains a lone surrogate');
    expect((await documentsOf(org.organizationId, [good, bad])).map((d) => d.document_number)).toEqual([good]);
  });

  it('refuses strings beyond their documented maximum per record (never a 500 losing the batch); the limits are in OpenAPI', async () => {
    const code = docNo();
    const customers = await pushCustomers(stack, org.apiKey, [
      customerRecord({ customer_code: `${code}-ok`, name1: 'n'.repeat(255) }),
      customerRecord({ customer_code: `${code}-name`, name1: 'n'.repeat(3000) }),
      customerRecord({ customer_code: `${code}-${'c'.repeat(9000)}` }),
      customerRecord({ customer_code: `${code}-term`, search_term: 's'.repeat(256) }),
    ]);
    expect(customers.status, JSON.stringify(customers.body).slice(0, 500)).toBe(200);
    expect(customers.body.results.map((r) => [r.success, r.error_code])).toEqual([
      [true, null],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
    ]);
    expect(customers.body.results[1]!.message).toBe('name1: must be at most 255 characters');
    expect(customers.body.results[2]!.message).toBe('customer_code: must be at most 100 characters');
    expect(customers.body.results[3]!.message).toBe('search_term: must be at most 255 characters');

    const [good, long, longText] = [docNo(), docNo(), docNo()];
    const invoices = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: good, reference: 'r'.repeat(100) }),
      invoiceRecord({ document_number: long, reference: 'r'.repeat(9000), assignment: 'a'.repeat(9000) }),
      invoiceRecord({ document_number: longText, text: 't'.repeat(1001) }),
      invoiceRecord({ document_number: 'd'.repeat(9000) }),
    ]);
    expect(invoices.status, JSON.stringify(invoices.body).slice(0, 500)).toBe(200);
    expect(invoices.body.results.map((r) => [r.success, r.error_code])).toEqual([
      [true, null],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
      [false, 'invalid_field'],
    ]);
    expect(invoices.body.results[1]!.message).toBe('reference: must be at most 100 characters; assignment: must be at most 100 characters');
    expect(invoices.body.results[2]!.message).toBe('text: must be at most 1000 characters');
    expect((await documentsOf(org.organizationId, [good, long, longText])).map((d) => d.document_number)).toEqual([good]);

    const doc = (await stack.request('GET', '/openapi.json')).body;
    const records = (op: string) => {
      const body = doc.paths[`/v2/integrations/providers/middleware/${op}`].post.requestBody.content['application/json'].schema;
      const schema = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
      const items = schema.items.$ref ? doc.components.schemas[schema.items.$ref.split('/').pop()] : schema.items;
      return items.properties as Record<string, { maxLength?: number; anyOf?: { maxLength?: number }[]; type?: string | string[] }>;
    };
    const maxOf = (p: { maxLength?: number; anyOf?: { maxLength?: number }[] }) => p.maxLength ?? p.anyOf?.find((a) => a.maxLength)?.maxLength;
    const customerProps = records('customers');
    for (const field of ['customer_code', 'name1', 'name2', 'name3', 'street', 'house_num1', 'house_num2', 'post_code1', 'city1', 'city2', 'region', 'country', 'accounting_clerk', 'accounting_clerk_name', 'smtp_addr', 'tel_number', 'telnr_long', 'tax_jurisdiction', 'payment_method', 'search_term', 'vendor_account_number', 'company_code']) {
      expect(maxOf(customerProps[field]!), `customers.${field}`).toBeGreaterThan(0);
    }
    expect(maxOf(customerProps.name1!)).toBe(255);
    const invoiceProps = records('invoices');
    for (const field of ['document_number', 'company_code', 'customer_code', 'document_type', 'invoice_doc_type', 'exchange_rate', 'reference', 'assignment', 'text', 'reason_code', 'clearing_document_number']) {
      expect(maxOf(invoiceProps[field]!), `invoices.${field}`).toBeGreaterThan(0);
    }
    expect(maxOf(invoiceProps.document_number!)).toBe(100);
  });

  it('refuses a JSON number of more than 15 significant digits (rounded by the parser), as 1.005 is refused for EUR; decimal strings stay exact', async () => {
    const [rounded, beyondSafe, fifteen, asText] = [docNo(), docNo(), docNo(), docNo()];
    // the numbers a client's JSON text with these digits turns into: the parser's doubles
    const [roundedNumber, beyondSafeNumber] = [Number('1234567890123456.78'), Number('9007199254740993')];
    const res = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: rounded, amount_in_document_currency: roundedNumber, line_items: [] }),
      invoiceRecord({ document_number: beyondSafe, amount_in_document_currency: beyondSafeNumber, line_items: [] }),
      invoiceRecord({ document_number: fifteen, amount_in_document_currency: 1234567890123.45, line_items: [] }),
      invoiceRecord({ document_number: asText, amount_in_document_currency: '1234567890123456.78' as unknown as number, line_items: [] }),
    ]);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.results.map((r) => [r.success, r.error_code])).toEqual([
      [false, 'invalid_amount'],
      [false, 'invalid_amount'],
      [true, null],
      [true, null],
    ]);
    expect(res.body.results[0]!.message).toContain('amount_in_document_currency has more than 15 significant digits');
    const stored = await documentsOf(org.organizationId, [rounded, beyondSafe, fifteen, asText]);
    expect(stored.map((d) => [d.document_number, d.amount_in_document_currency])).toEqual(
      [
        [fifteen, '1234567890123.4500'],
        [asText, '1234567890123456.7800'],
      ].sort((a, b) => a[0]!.localeCompare(b[0]!)),
    );
  });
});

describe('storage', () => {
  it('re-pushing updates the same row, keeps its service_id and replaces the line items as a set', async () => {
    const number = docNo();
    const first = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({
        document_number: number,
        amount_in_document_currency: 300,
        line_items: [
          { line_number: 1, description: 'A', quantity: 1, unit_amount: 100, total_amount: 100 },
          { line_number: 2, description: 'B', quantity: 2, unit_amount: 100, total_amount: 200 },
        ],
      }),
    ]);
    const id = first.body.results[0]!.service_id!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await lineItemsOf(id)).toHaveLength(2);

    const second = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({
        document_number: number,
        amount_in_document_currency: 250,
        amount_in_local_currency: 250,
        status_open: false,
        clearing_date: '2026-10-05',
        clearing_document_number: '1400000001',
        reference: 'REF-2',
        line_items: [{ line_number: 3, description: 'C', quantity: 2.5, unit_amount: 100, total_amount: 250 }],
      }),
    ]);
    expect(second.body.results[0]).toMatchObject({ success: true, service_id: id, remote_id: number });
    const [doc] = await documentsOf(org.organizationId, [number]);
    expect(doc).toMatchObject({
      id,
      kind: 'invoice',
      amount_in_document_currency: '250.0000',
      amount_open: '0.0000',
      status_open: false,
      clearing_date: '2026-10-05',
      reference: 'REF-2',
      origin: 'middleware',
      remote_id: number,
    });
    expect(await lineItemsOf(id)).toEqual([{ line_number: 3, description: 'C', quantity: '2.500000', unit_amount: '100.000000', total_amount: '250.0000' }]);
    const [{ n }] = await stack.sql(`SELECT count(*)::int AS n FROM integrations.documents WHERE organization_id = $1 AND document_number = $2`, [org.organizationId, number]);
    expect(n).toBe(1);
  });

  it('stores S as an invoice and H as a credit memo; flipping the indicator keeps the id', async () => {
    const [s, h] = [docNo(), docNo()];
    const res = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: s }), invoiceRecord({ document_number: h, debit_credit_indicator: 'H' })]);
    const docs = await documentsOf(org.organizationId, [s, h]);
    expect(docs.map((d) => [d.document_number, d.kind])).toEqual([
      [s, 'invoice'],
      [h, 'credit_memo'],
    ]);
    const flipped = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: s, debit_credit_indicator: 'H' })]);
    expect(flipped.body.results[0]!.service_id).toBe(res.body.results[0]!.service_id);
    expect((await documentsOf(org.organizationId, [s]))[0]).toMatchObject({ kind: 'credit_memo', id: res.body.results[0]!.service_id });
  });

  it('keeps the later of two records with the same key in one request; both get the same service_id', async () => {
    const number = docNo();
    const res = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: number, amount_in_document_currency: 10 }),
      invoiceRecord({ document_number: number, amount_in_document_currency: 20 }),
    ]);
    expect(res.body.results.map((r) => r.success)).toEqual([true, true]);
    expect(res.body.results[0]!.service_id).toBe(res.body.results[1]!.service_id);
    const docs = await documentsOf(org.organizationId, [number]);
    expect(docs).toHaveLength(1);
    expect(docs[0].amount_in_document_currency).toBe('20.0000');
    // Same document number in another fiscal year is another document.
    const other = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: number, fiscal_year: '2025' })]);
    expect(other.body.results[0]!.service_id).not.toBe(res.body.results[0]!.service_id);
  });

  it('survives concurrent pushes of the same keys (invoices and their customer at once): one row per key, all linked', async () => {
    const prefix = docNo();
    const code = docNo();
    const records = Array.from({ length: 50 }, (_, i) => invoiceRecord({ document_number: `${prefix}-${i}`, customer_code: code }));
    const reversed = [...records].reverse();
    const responses = await Promise.all([
      pushInvoices(stack, org.apiKey, records),
      pushInvoices(stack, org.apiKey, reversed),
      pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code })]),
      pushInvoices(stack, org.apiKey, records),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(responses.every((r) => r.body.results.every((x) => x.success))).toBe(true);
    expect(responses[0]!.body.results.map((r) => r.service_id)).toEqual(responses[1]!.body.results.map((r) => r.service_id).reverse());
    // Whichever order they ran in, a final customer push links anything still waiting.
    const partnerId = (await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code })])).body.results[0]!.service_id;
    const rows = await stack.sql(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE partner_id = $3)::int AS linked FROM integrations.documents WHERE organization_id = $1 AND document_number LIKE $2`,
      [org.organizationId, `${prefix}-%`, partnerId],
    );
    expect(rows[0]).toEqual({ n: 50, linked: 50 });
  });

  it('accepts historic ISO 4217 codes and rejects unknown ones', async () => {
    const [dem, frf, bad] = [docNo(), docNo(), docNo()];
    const res = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: dem, currency: 'DEM', fiscal_year: '1998' }),
      invoiceRecord({ document_number: frf, currency: 'FRF' }),
      invoiceRecord({ document_number: bad, currency: 'ABC' }),
    ]);
    expect(res.body.results.map((r) => r.error_code)).toEqual([null, null, 'invalid_currency']);
    expect((await documentsOf(org.organizationId, [dem, frf, bad])).map((d) => d.currency)).toEqual(['DEM', 'FRF']);
  });

  it('stores amounts exactly to the cent', async () => {
    const [a, b, c] = [docNo(), docNo(), docNo()];
    const res = await pushInvoices(stack, org.apiKey, [
      invoiceRecord({ document_number: a, amount_in_document_currency: 0.1, amount_in_local_currency: 0.2, line_items: [] }),
      invoiceRecord({ document_number: b, amount_in_document_currency: 1234567890123.45, amount_in_local_currency: 0.07, line_items: [] }),
      invoiceRecord({ document_number: c, amount_in_document_currency: 0.1 + 0.2, line_items: [] }),
    ]);
    expect(res.body.results.map((r) => r.error_code)).toEqual([null, null, 'invalid_amount']);
    const [{ total }] = await stack.sql(
      `SELECT (sum(amount_in_document_currency) FILTER (WHERE document_number = $2) + sum(amount_in_local_currency) FILTER (WHERE document_number = $2))::text AS total
         FROM integrations.documents WHERE organization_id = $1`,
      [org.organizationId, a],
    );
    expect(total).toBe('0.3000');
    const docs = await documentsOf(org.organizationId, [a, b]);
    expect(docs.map((d) => [d.amount_in_document_currency, d.amount_in_local_currency, d.amount_open])).toEqual([
      ['0.1000', '0.2000', '0.1000'],
      ['1234567890123.4500', '0.0700', '1234567890123.4500'],
    ]);
  });
});

describe('customers', () => {
  it('maps the SAP-style fields onto the partner and upserts by customer_code', async () => {
    const code = docNo();
    const record = customerRecord({ customer_code: code, name2: 'Niederlassung Nord', name3: '', house_num2: 'a', city2: 'Mitte' });
    const res = await pushCustomers(stack, org.apiKey, [record]);
    expect(res.status).toBe(200);
    const id = res.body.results[0]!.service_id;
    expect(res.body.results[0]).toMatchObject({ success: true, remote_id: code, error_code: null });
    const [p] = await stack.sql(`SELECT * FROM integrations.partners WHERE organization_id = $1 AND remote_id = $2`, [org.organizationId, code]);
    expect(p).toMatchObject({
      id,
      origin: 'middleware',
      account_number: code,
      name: 'Acme Handels GmbH',
      legal_name: 'Acme Handels GmbH Niederlassung Nord',
      email: 'ap@acme.example',
      phone: '+49301234567',
      company_code: '1000',
      search_term: 'ACME',
      address: {
        line1: 'Hauptstrasse 12 a',
        street: 'Hauptstrasse',
        house_number: '12',
        house_number_supplement: 'a',
        postal_code: '10115',
        city: 'Berlin',
        district: 'Mitte',
        region: 'BE',
        country: 'DE',
      },
      attributes: {
        name2: 'Niederlassung Nord',
        accounting_clerk: '01',
        accounting_clerk_name: 'Ben Clerk',
        tel_number: '+49 30 1234567',
        telnr_long: '+49301234567',
        payment_method: 'T',
      },
    });

    const again = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: 'Acme AG', telnr_long: '', smtp_addr: '' })]);
    expect(again.body.results[0]!.service_id).toBe(id);
    const [q] = await stack.sql(`SELECT name, legal_name, phone, email FROM integrations.partners WHERE id = $1`, [id]);
    expect(q).toEqual({ name: 'Acme AG', legal_name: 'Acme AG', phone: '+49 30 1234567', email: null });
  });

  it('stores an invoice whose customer is unknown, and links it when the customer is pushed', async () => {
    const code = docNo();
    const [early, late] = [docNo(), docNo()];
    const invoice = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: early, customer_code: code })]);
    expect(invoice.body.results[0]!.success).toBe(true);
    expect((await documentsOf(org.organizationId, [early]))[0]).toMatchObject({ partner_id: null, customer_code: code });

    const customer = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code })]);
    const partnerId = customer.body.results[0]!.service_id;
    expect((await documentsOf(org.organizationId, [early]))[0]!.partner_id).toBe(partnerId);

    await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: late, customer_code: code })]);
    expect((await documentsOf(org.organizationId, [late]))[0]!.partner_id).toBe(partnerId);
  });

  it('puts records in business units; documents without one take their partner\'s', async () => {
    const unit = await stack.request('POST', '/v2/business-units', { token: org.token, body: { name: `Unit ${docNo()}` } });
    expect(unit.status).toBe(200);
    const unitId = unit.body.id as string;
    const code = docNo();
    const [waiting, explicit] = [docNo(), docNo()];
    await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: waiting, customer_code: code })]);
    const customer = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, business_unit_id: unitId })]);
    expect(customer.body.results[0]!.success).toBe(true);
    const [p] = await stack.sql(`SELECT business_unit_id FROM integrations.partners WHERE id = $1`, [customer.body.results[0]!.service_id]);
    expect(p.business_unit_id).toBe(unitId);
    expect((await documentsOf(org.organizationId, [waiting]))[0]!.business_unit_id).toBe(unitId);

    const res = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: explicit, customer_code: 'nobody', business_unit_id: unitId })]);
    expect(res.body.results[0]!.success).toBe(true);
    expect((await documentsOf(org.organizationId, [explicit]))[0]!.business_unit_id).toBe(unitId);

    // Another organization's unit is not one of ours.
    const other = await stack.onboard();
    const foreign = await pushInvoices(stack, other.apiKey, [invoiceRecord({ document_number: docNo(), business_unit_id: unitId })]);
    expect(foreign.body.results[0]).toMatchObject({ success: false, error_code: 'invalid_business_unit' });
  });
});

describe('tenant isolation', () => {
  it('keeps each organization\'s rows apart even with the same keys', async () => {
    const orgB = await stack.onboard();
    const number = docNo();
    const code = docNo();
    const a = await pushInvoices(stack, org.apiKey, [invoiceRecord({ document_number: number, customer_code: code, amount_in_document_currency: 100 })]);
    const b = await pushInvoices(stack, orgB.apiKey, [invoiceRecord({ document_number: number, customer_code: code, amount_in_document_currency: 999 })]);
    expect(a.body.results[0]!.service_id).not.toBe(b.body.results[0]!.service_id);
    const ca = await pushCustomers(stack, org.apiKey, [customerRecord({ customer_code: code, name1: 'A' })]);
    const cb = await pushCustomers(stack, orgB.apiKey, [customerRecord({ customer_code: code, name1: 'B' })]);
    expect(ca.body.results[0]!.service_id).not.toBe(cb.body.results[0]!.service_id);

    const [docA] = await documentsOf(org.organizationId, [number]);
    const [docB] = await documentsOf(orgB.organizationId, [number]);
    expect(docA).toMatchObject({ id: a.body.results[0]!.service_id, amount_in_document_currency: '100.0000', partner_id: ca.body.results[0]!.service_id });
    expect(docB).toMatchObject({ id: b.body.results[0]!.service_id, amount_in_document_currency: '999.0000', partner_id: cb.body.results[0]!.service_id });
    const names = await stack.sql(`SELECT organization_id, name FROM integrations.partners WHERE remote_id = $1 ORDER BY name`, [code]);
    expect(names).toEqual([
      { organization_id: org.organizationId, name: 'A' },
      { organization_id: orgB.organizationId, name: 'B' },
    ]);
  });
});
