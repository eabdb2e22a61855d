/**
 * Cross-organization id substitution over EVERY operation: the operations come
 * from the gateway's merged /openapi.json, so a new route is walked without touching this file. For
 * each operation with an id in its path, query or body, organization A calls it twice: once with
 * organization B's ids (B is seeded through the API with one record of each resource), once with
 * random ids. Asserted for every call: no 5xx; a 2xx never carries B's ids; B's id answers exactly
 * like a random id (same status, error type and error locations, and for a 2xx the same per-record
 * outcomes and list totals: no existence disclosure); and B's records read the same afterwards. An id-like name (`*_id`, `*_ids`, `*_id__in`) with no seeded
 * record fails the test, so a new kind of id must be seeded here.
 *
 * No SQL: everything goes through the gateway, except organization B's knowledge proposals: only the
 * playbook-extraction workflow makes proposals (no endpoint can), so two are inserted with SQL; one is
 * approved through the API into B's article, the other stays pending. B's collection run and follow-up
 * task come from a real run of B's task policy, done by an admin worker that runs for that run only (so
 * nothing else of B, such as its promise's workflow or its webhook delivery, moves during the walk);
 * B's inbox message is an email delivered over SMTP to B's inbound host and read while that worker runs.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './support/ledger.js';
import { waitForStatement } from './support/cash.js';
import { compose, deliver, processed } from './support/inbox.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

type Schema = Record<string, any>;

let stack: TestStack;
let a: Org;
let b: Org;
/** organization B's ids by the parameter / field name that refers to them */
const bIds: Record<string, string> = {};
/** non-id path parameters: a valid value */
const PATH_VALUES: Record<string, string> = { name: 'middleware', email: 'victim.invitee@b.example', operation: 'parse_backup' };

async function ok(res: Promise<{ status: number; body: any }>, status = 200) {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  return r.body;
}

beforeAll(async () => {
  // The walk sends several hundred requests per organization in seconds: the gateway's rate limit (tested in
  // security-gateway.test.ts) is raised so every answer compared here is the operation's own.
  stack = await startStack({ workers: ['cash-app', 'integrations'], env: { RATE_LIMIT_BURST: '100000', RATE_LIMIT_PER_SECOND: '100000' } });
  [a, b] = await Promise.all([stack.onboard('Attacker'), stack.onboard('Victim')]);
  const post = (path: string, body: unknown, token = b.token) => ok(stack.request('POST', path, { token, body }));

  bIds.business_unit_id = (await post('/v2/business-units', { name: 'Victim unit' })).id;
  bIds.user_id = (await post('/v2/users', { email: 'victim.member@b.example', name: 'Vic', role: 'member', business_unit_ids: [bIds.business_unit_id] })).id;
  // a second user of B: the backup of an out-of-office (backup_user_id)
  bIds.backup_user_id = (await post('/v2/users', { email: 'victim.backup@b.example', name: 'Bea', role: 'member' })).id;
  // B's pending invite of the email the path parameter `email` names (DELETE /v1/user-invites/{email})
  await post('/v1/user-invites', { email: PATH_VALUES.email });
  await post(`/v2/users/${bIds.user_id}/ooo`, { backup_user_id: bIds.backup_user_id, start_date: '2026-01-01' });
  bIds.api_key_id = (await post('/v2/api-keys', { name: 'victim key' })).id;
  const adjustment = await post('/v2/adjustments', { name: 'Victim fee', ledger_account: { name: 'Fees', number: '6900' } });
  bIds.adjustment_id = adjustment.id;
  bIds.ledger_account_id = adjustment.ledger_account.id;
  await ok(stack.request('PUT', '/v2/exchange-rates', { token: b.token, body: [{ base_currency: 'EUR', quote_currency: 'USD', rate_date: '2026-10-01', rate: '1.10' }] }));
  bIds.connection_id = (await post('/v2/integrations/connections', { provider_name: 'middleware', name: 'Victim ERP', business_unit_id: bIds.business_unit_id })).id;

  const customers = await pushCustomers(stack, b.apiKey, [customerRecord({ customer_code: 'V-1', name1: 'Victim Kunde', smtp_addr: 'ap@victim.example' })]);
  bIds.partner_id = customers.body.results[0]!.service_id!;
  const invoices = await pushInvoices(stack, b.apiKey, [invoiceRecord({ document_number: 'V-9001', reference: 'V-9001', customer_code: 'V-1', amount_in_document_currency: 500 })]);
  bIds.invoice_id = invoices.body.results[0]!.service_id!;
  // a collection run of B whose task step makes B's follow-up task (before the promise and the dispute,
  // which put the invoice on hold); the admin worker runs for this run only (see the header)
  await post('/v2/collection-policies', { name: 'Victim calls', segment_id: null, is_enabled: true, steps: [{ offset_days: 0, channel: 'task' }] });
  const admin = await stack.startWorker('admin');
  try {
    bIds.run_id = (await ok(stack.request('POST', '/v2/collections/runs', { token: b.token, body: {} }), 202)).id;
    for (let i = 0; i < 300; i++) {
      if ((await ok(stack.request('GET', `/v2/collections/runs/${bIds.run_id}`, { token: b.token }))).status !== 'running') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    // an email to B's inbound host, read by B's inbox workflow while the admin worker runs
    const raw = await compose({ from: 'ap@victim-customer.example', to: 'ar@victim.example', subject: 'Victim mail', messageId: `<victim-${randomUUID()}@victim-customer.example>`, text: 'Hello' });
    bIds.inbox_message_id = (await processed(stack, b.token, await deliver(stack, b, raw))).id;
  } finally {
    await admin.close();
    delete stack.workers.admin;
  }
  const [taskAction] = (await ok(stack.request('GET', `/v2/collections/actions?run_id=${bIds.run_id}`, { token: b.token }))).data;
  expect(taskAction, 'the run of B made its task').toMatchObject({ channel: 'task', status: 'sent', partner_id: bIds.partner_id });
  bIds.task_id = taskAction.task_id;
  // a promise to pay and a dispute of B's customer (the promise's workflow waits: no admin worker runs any more)
  const inAMonth = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
  bIds.promise_id = (await post('/v2/promises-to-pay', { partner_id: bIds.partner_id, invoice_ids: [bIds.invoice_id], amount: '100.00', promised_date: inAMonth })).id;
  bIds.dispute_id = (await post('/v2/disputes', { invoice_id: bIds.invoice_id, reason_code: 'pricing', amount: '20.00' })).id;
  bIds.tag_id = (await post('/v1/tags', { name: 'Victim tag', color: '#112233', rule_condition: { field: 'country', op: 'eq', value: 'DE' } })).id;
  await ok(stack.request('POST', `/v1/tags/${bIds.tag_id}/partners`, { token: b.token, body: { partner_ids: [bIds.partner_id] } }), 204);
  bIds.segment_id = (await post('/v2/customer-segments', { name: 'Victim segment', priority: 1, conditions: { field: 'tag', op: 'eq', value: bIds.tag_id } })).id;
  bIds.report_config_id = (await post('/v2/report-configs', { report_type: 'ar_aging_report', frequency: 'daily', time: '07:30', recipient_emails: ['ar@victim.example'] })).id;
  bIds.assignee_id = bIds.user_id;
  // a webhook endpoint and a test event of it: the event (in B's event log) and its delivery
  bIds.webhook_endpoint_id = (await post('/v2/webhook-endpoints', { url: 'https://hooks.victim.example/in', events: ['*'] })).id;
  const delivery = await ok(stack.request('POST', `/v2/webhook-endpoints/${bIds.webhook_endpoint_id}/test`, { token: b.token }), 202);
  bIds.delivery_id = delivery.id;
  bIds.event_id = delivery.event_id;

  const statement = await post('/v2/bank-statements', {
    account: 'DE02120300000000202051',
    currency: 'EUR',
    statement_number: `V-${randomUUID()}`,
    transactions: [{ amount: '123.45', booking_date: '2026-10-15', value_date: '2026-10-15', counterparty_name: 'Jemand', bank_reference: `V-${randomUUID().slice(0, 8)}` }],
  });
  bIds.statement_id = statement.id;
  const ready = await waitForStatement(stack, b.token, statement.id);
  bIds.bank_transaction_id = ready.transactions[0].id;
  bIds.bank_account_id = ready.bank_account_id;
  const existing = (await ok(stack.request('GET', `/v2/payments?bank_transaction_id=${bIds.bank_transaction_id}`, { token: b.token }))).data[0];
  const allocations = [{ invoice_id: bIds.invoice_id, amount_paid: '123.45' }];
  const payment = existing
    ? await ok(stack.request('PATCH', `/v2/payments/${existing.id}`, { token: b.token, body: { allocations, partner_id: bIds.partner_id } }))
    : await post('/v2/payments', { bank_transaction_id: bIds.bank_transaction_id, allocations, partner_id: bIds.partner_id });
  bIds.payment_id = payment.id;
  await post(`/v2/payments/${payment.id}/approve`, {});
  bIds.outreach_id = (await post('/v2/cash-app/outreach/payment-receipt', { payment_id: payment.id })).id;
  bIds.remittance_id = (await post('/v1/remittances', { payer_name: 'Victim Kunde', currency: 'EUR', transaction_amount: 10, allocations: [{ invoice_number: 'V-9001', amount_paid: 10 }] })).id;
  bIds.folder_id = (await post('/v1/email-template-folders', { name: 'Victim folder' })).id;
  bIds.email_template_id = (await post('/v1/email-templates', { folder_id: bIds.folder_id, name: 'Dunning', subject: 'Hi {{ customer.name }}', body: 'Open: {{ totals.open_amount }}' })).id;
  bIds.sms_template_id = (await post('/v2/sms-templates', { name: 'Victim SMS', body: 'Hi {{ customer.name }}' })).id;
  bIds.attachment_id = (await post(`/v1/email-templates/${bIds.email_template_id}/attachments`, { name: 'terms.txt', mime_type: 'text/plain', size: 5 })).id;
  // collections engine: a policy of B's segment sending B's templates
  bIds.policy_id = (
    await post('/v2/collection-policies', {
      name: 'Victim policy',
      segment_id: bIds.segment_id,
      is_enabled: false,
      steps: [
        { offset_days: 1, channel: 'email', email_template_id: bIds.email_template_id },
        { offset_days: 5, channel: 'sms', sms_template_id: bIds.sms_template_id },
      ],
    })
  ).id;
  // a knowledge file uploaded through its presigned URL and verified, and an extraction job of it
  const note = Buffer.from('Victim playbook: call the customer 7 days after the due date.\n');
  const file = await post('/v2/aether/files', { name: 'victim.md', mime_type: 'text/markdown', size: note.length });
  expect((await fetch(file.upload_url, { method: 'PUT', headers: file.upload_headers, body: note })).status).toBe(200);
  expect((await ok(stack.request('GET', `/v2/aether/files/${file.id}`, { token: b.token }))).is_verified).toBe(true);
  bIds.file_id = file.id;
  bIds.extraction_id = (await post('/v2/aether/playbook/extractions', { file_id: file.id })).id;
  // knowledge: proposals with SQL (see the header), an approved article, a customer deduction entry
  bIds.customer_id = bIds.partner_id;
  bIds.extraction_id ??= randomUUID();
  const proposalOfB = async () => {
    const [row] = await stack.sql(
      `INSERT INTO knowledge.proposals (id, organization_id, action, collection, title, content, customer_id, extraction_id)
       VALUES (gen_random_uuid(), $1, 'create', 'deductions', 'Victim knowledge', 'Victim content', $2, $3) RETURNING id`,
      [b.organizationId, bIds.partner_id, bIds.extraction_id],
    );
    return row.id as string;
  };
  bIds.article_id = (await post(`/v2/aether/playbook/proposals/${await proposalOfB()}/approve`, {})).article_id;
  bIds.proposal_id = await proposalOfB();
  await ok(stack.request('PUT', `/v2/deductions/knowledge/partners/${bIds.partner_id}/parse_backup`, { token: b.token, body: { content: 'Victim entry' } }));
  for (const [k, v] of Object.entries(bIds)) expect(v, k).toMatch(/^[0-9a-f-]{36}$/);
  // the receipt settles (sent or skipped) before the snapshot, so nothing of B moves by itself meanwhile
  for (let i = 0; i < 200; i++) {
    if ((await stack.request('GET', `/v2/cash-app/outreach/${bIds.outreach_id}`, { token: b.token })).body.status !== 'pending') break;
    await new Promise((r) => setTimeout(r, 150));
  }
}, 180_000);

afterAll(async () => stack?.close());

/** The id that `name` refers to: B's seeded record (or a random id); throws for an unseeded kind. */
function idFor(name: string, random: boolean): string {
  const base = name.replace(/__in$/, '').replace(/_ids$/, '_id');
  const seeded = bIds[base];
  if (!seeded) throw new Error(`no record of organization B seeded for "${name}": seed one in test/cross-org.test.ts`);
  return random ? randomUUID() : seeded;
}

/** id-like names that are not references to our records (a bank's or an ERP's own identifiers) */
const EXTERNAL_IDS = new Set(['end_to_end_id', 'remote_id', 'realm_id', 'realmId', 'client_id', 'azure_tenant_id', 'azure_client_id']);
const isIdName = (name: string) => !EXTERNAL_IDS.has(name) && /_id$|_ids$|_id__in$/.test(name);

/**
 * Bodies whose schema cannot show their ids (the middleware pushes validate each record by itself, so
 * their body schema is an array of free objects): a valid record naming B's (or a random) unit.
 */
const UNDECLARED_BODY_IDS: Record<string, (id: (name: string) => string) => unknown> = {
  'POST /v2/integrations/providers/middleware/customers': (id) => [{ ...customerRecord({ customer_code: `X-${randomUUID().slice(0, 8)}` }), business_unit_id: id('business_unit_id') }],
  'POST /v2/integrations/providers/middleware/invoices': (id) => [{ ...invoiceRecord({ document_number: `X-${randomUUID().slice(0, 8)}` }), business_unit_id: id('business_unit_id') }],
};

/** Whether the schema (an optional property) holds an id somewhere: then the sample fills it in. */
function holdsId(doc: Schema, s: Schema | undefined, depth = 0): boolean {
  const schema = resolve(doc, s);
  if (depth > 6) return false;
  const nested = [...((schema.anyOf ?? schema.oneOf ?? schema.allOf ?? []) as Schema[]), ...(schema.items ? [schema.items as Schema] : [])];
  if (nested.some((x) => holdsId(doc, x, depth + 1))) return true;
  return Object.entries((schema.properties ?? {}) as Record<string, Schema>).some(([k, v]) => isIdName(k) || holdsId(doc, v, depth + 1));
}

function resolve(doc: Schema, s: Schema | undefined): Schema {
  let schema = s ?? {};
  for (let i = 0; schema.$ref && i < 10; i++) {
    const path = (schema.$ref as string).replace(/^#\//, '').split('/');
    schema = path.reduce((o: any, k) => o?.[k], doc) ?? {};
  }
  return schema;
}

/**
 * A value for the schema: required properties and every id-like one; ids are B's (or random) when
 * their name says id, other strings unique, so a create never collides with an earlier one.
 */
function sample(doc: Schema, s: Schema | undefined, name: string, random: boolean, slots: string[]): unknown {
  const schema = resolve(doc, s);
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants) {
    const nonNull = variants.map((v) => resolve(doc, v)).filter((v) => v.type !== 'null');
    return sample(doc, nonNull[0] ?? variants[0], name, random, slots);
  }
  if (schema.allOf) return sample(doc, Object.assign({}, ...(schema.allOf as Schema[]).map((x) => resolve(doc, x))), name, random, slots);
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((t) => t !== 'null') : schema.type;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return (schema.enum as unknown[]).find((v) => v !== null);
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [key, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) {
      if (required.has(key) || isIdName(key) || holdsId(doc, prop)) out[key] = sample(doc, prop, key, random, slots);
    }
    return out;
  }
  if (type === 'array') {
    const item = sample(doc, schema.items as Schema, isIdName(name) ? name : `${name}[]`, random, slots);
    return [item];
  }
  if (isIdName(name) && (type === 'string' || type === undefined)) {
    slots.push(name);
    return idFor(name, random);
  }
  if (type === 'integer' || type === 'number') return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
  if (type === 'boolean') return false;
  if (type === 'string') {
    if (schema.format === 'date') return '2026-10-01';
    if (schema.format === 'date-time') return '2026-10-01T00:00:00Z';
    if (schema.format === 'email') return `x-${randomUUID().slice(0, 8)}@a.example`;
    if (schema.format === 'uuid') return randomUUID();
    return `x-${randomUUID().slice(0, 8)}`.slice(0, (schema.maxLength as number | undefined) ?? 100);
  }
  return null;
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  token: string;
  slots: string[];
}

function buildCall(doc: Schema, method: string, template: string, op: Schema, token: string, random: boolean): Call {
  const slots: string[] = [];
  const query: string[] = [];
  let path = template;
  for (const p of (op.parameters ?? []) as Schema[]) {
    const param = resolve(doc, p);
    if (param.in === 'path') {
      let value: string;
      if (isIdName(param.name)) {
        slots.push(param.name);
        value = idFor(param.name, random);
      } else if (PATH_VALUES[param.name]) value = PATH_VALUES[param.name]!;
      else throw new Error(`no value for the path parameter "${param.name}" of ${method} ${template}: add one to PATH_VALUES`);
      path = path.replace(`{${param.name}}`, encodeURIComponent(value));
    } else if (param.in === 'query' && isIdName(param.name)) {
      slots.push(param.name);
      query.push(`${param.name}=${idFor(param.name, random)}`);
    }
  }
  const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
  const undeclared = UNDECLARED_BODY_IDS[`${method.toUpperCase()} ${template}`];
  const body = undeclared
    ? undeclared((name) => {
        slots.push(name);
        return idFor(name, random);
      })
    : content?.['application/json']
      ? sample(doc, content['application/json'].schema, 'body', random, slots)
      : undefined;
  return { method: method.toUpperCase(), path: query.length ? `${path}?${query.join('&')}` : path, body, token, slots };
}

function shape(res: { status: number; body: any }) {
  const body = res.body ?? {};
  const locs = Array.isArray(body.errors) ? (body.errors as { loc: unknown[] }[]).map((e) => JSON.stringify(e.loc)).sort() : [];
  // v1 validation errors: the fields named in detail
  const v1 = body.detail && typeof body.detail === 'object' ? Object.entries(body.detail as Record<string, object>).flatMap(([where, fields]) => Object.keys(fields).map((f) => `${where}.${f}`)).sort() : [];
  // a 2xx's outcome: per-record success and error codes (batch answers), list totals
  const outcome: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (['success', 'error_code', 'total_records'].includes(k)) outcome.push(`${k}=${String(x)}`);
        else walk(x);
      }
    }
  };
  if (res.status < 300) walk(body);
  return { status: res.status, type: body.type ?? body.error ?? null, locs, v1, outcome: outcome.sort() };
}

async function snapshotOfB() {
  const paths = [
    `/v2/business-units/${bIds.business_unit_id}`,
    `/v2/users/${bIds.user_id}`,
    `/v2/users/${bIds.user_id}/ooo`,
    '/v1/user-invites',
    '/v2/api-keys',
    `/v2/adjustments/${bIds.adjustment_id}`,
    '/v2/adjustments/ledger-accounts',
    '/v2/exchange-rates',
    `/v2/integrations/connections/${bIds.connection_id}`,
    `/v2/bank-statements/${bIds.statement_id}`,
    `/v2/payments/${bIds.payment_id}`,
    `/v2/cash-app/outreach/${bIds.outreach_id}`,
    `/v1/remittances/${bIds.remittance_id}`,
    `/v1/tags/${bIds.tag_id}`,
    `/v1/tags/${bIds.tag_id}/partners`,
    `/v2/customer-segments/${bIds.segment_id}`,
    `/v2/customer-segments/${bIds.segment_id}/partners`,
    `/v2/report-configs/${bIds.report_config_id}`,
    `/v2/report-configs/${bIds.report_config_id}/runs`,
    `/v2/collection-policies/${bIds.policy_id}`,
    `/v2/tasks?partner_id=${bIds.partner_id}`,
    `/v2/webhook-endpoints/${bIds.webhook_endpoint_id}`,
    `/v2/webhook-endpoints/${bIds.webhook_endpoint_id}/deliveries`,
    `/v2/events/${bIds.event_id}`,
    `/v2/partners/${bIds.partner_id}`,
    `/v2/aether/files/${bIds.file_id}`,
    `/v2/aether/playbook/extractions/${bIds.extraction_id}`,
    `/v2/aether/playbook/proposals/${bIds.proposal_id}`,
    `/v2/aether/playbook/articles/${bIds.article_id}`,
    `/v2/deductions/knowledge/partners/${bIds.partner_id}`,
  ];
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    const res = await stack.request('GET', p, { token: b.token });
    expect(res.status, p).toBe(200);
    // the connection's last health check time moves only when B checks it; next_sync_at is computed
    out[p] = JSON.parse(res.text, (k, v) => (k === 'next_sync_at' ? undefined : v));
  }
  return out;
}

it('every operation answers another organization\'s ids exactly like random ids, without 5xx or leaked data', async () => {
  const doc = (await stack.request('GET', '/openapi.json')).body as Schema;
  const before = await snapshotOfB();
  const leakedIds = Object.values(bIds);
  const walked: string[] = [];
  const problems: string[] = [];
  for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const credentials = (op['x-rp-auth']?.credentials as string[] | undefined) ?? ['user'];
      for (const kind of credentials) {
        const token = kind === 'api_key' ? a.apiKey : a.token;
        const withB = buildCall(doc, method, template, op, token, false);
        if (withB.slots.length === 0) continue; // nothing of B to substitute
        const withRandom = buildCall(doc, method, template, op, token, true);
        const label = `${withB.method} ${template} (${kind}; ${[...new Set(withB.slots)].join(', ')})`;
        walked.push(label);
        const resB = await stack.request(withB.method, withB.path, { token, ...(withB.body !== undefined ? { body: withB.body } : {}) });
        const resR = await stack.request(withRandom.method, withRandom.path, { token, ...(withRandom.body !== undefined ? { body: withRandom.body } : {}) });
        if (resB.status >= 500 || resR.status >= 500) problems.push(`${label}: ${resB.status}/${resR.status} ${resB.text.slice(0, 200)}`);
        if (resB.status < 300 && leakedIds.some((id) => resB.text.includes(id))) problems.push(`${label}: a ${resB.status} answer carries organization B's data: ${resB.text.slice(0, 300)}`);
        const sb = shape(resB);
        const sr = shape(resR);
        if (JSON.stringify(sb) !== JSON.stringify(sr)) problems.push(`${label}: B's ids answer ${JSON.stringify(sb)}, random ids ${JSON.stringify(sr)}`);
      }
    }
  }
  // CROSS_ORG_LIST=<file>: the operations walked, one a line (to review the coverage)
  if (process.env.CROSS_ORG_LIST) writeFileSync(process.env.CROSS_ORG_LIST, walked.join('\n'));
  expect(problems).toEqual([]);
  // the walk reached the operations that matter (and the id kinds B was seeded with)
  expect(walked.length).toBeGreaterThan(30);
  for (const must of ['GET /v2/payments/{payment_id}', 'PATCH /v2/payments/{payment_id}', 'POST /v2/payments ', 'POST /v2/integrations/connections ', 'DELETE /v2/bank-statements/{statement_id}', 'POST /v2/cash-app/outreach/payment-receipt', 'GET /v1/remittances/{remittance_id}', 'POST /v2/integrations/providers/middleware/payments/{payment_id}/posted', 'POST /v2/integrations/providers/middleware/invoices', 'POST /v2/integrations/providers/middleware/customers', 'POST /v2/aether/playbook/proposals/{proposal_id}/approve', 'PUT /v2/deductions/knowledge/partners/{partner_id}/{operation}']) {
    expect(walked.some((w) => w.startsWith(must)), must).toBe(true);
  }
  expect(await snapshotOfB()).toEqual(before);
}, 300_000);
