/**
 * Collections engine fixtures for end-to-end tests: customers and invoices pushed like the
 * middleware does; email templates, collection policies and runs through the API.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { customerRecord, invoiceRecord, pushCustomers, pushInvoices } from './ledger.js';
import type { Org, TestStack } from './stack.js';

export function todayIn(timeZone: string, offsetDays = 0): string {
  const d = new Date(Date.now() + offsetDays * 86_400_000);
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(d);
}

/**
 * A timezone whose wall clock now shows an hour in [from, to] (wrapping past midnight when from > to):
 * an organization set to it is inside or outside SMS quiet hours (20:00–08:00) whatever the hour here.
 */
export function zoneWithHour(from: number, to: number): string {
  const now = new Date();
  const ok = (h: number) => (from <= to ? h >= from && h <= to : h >= from || h <= to);
  for (const zone of Intl.supportedValuesOf('timeZone')) {
    const hour = Number(new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', hourCycle: 'h23' }).format(now));
    if (ok(hour)) return zone;
  }
  throw new Error(`no timezone at an hour in ${from}..${to}`);
}

/** `date` plus `days` days (YYYY-MM-DD). */
export function plusDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

export interface CustomerSpec {
  name?: string;
  email?: string;
  phone?: string;
  invoices: { number?: string; due: string; amount?: number; currency?: string }[];
}

/** A customer with open invoices (due dates given); answers its partner id and invoice ids. */
export async function customer(stack: TestStack, o: Org, spec: CustomerSpec): Promise<{ partnerId: string; invoiceIds: string[]; email: string }> {
  const code = `C-${randomBytes(4).toString('hex')}`;
  const email = spec.email ?? `ap.${randomBytes(4).toString('hex')}@customer.example`;
  const c = await pushCustomers(stack, o.apiKey, [customerRecord({ customer_code: code, name1: spec.name ?? 'Acme Handels GmbH', smtp_addr: email, tel_number: spec.phone ?? '', telnr_long: spec.phone ?? '' })]);
  expect(c.body.results[0]?.success, JSON.stringify(c.body)).toBe(true);
  const pushed = await pushInvoices(
    stack,
    o.apiKey,
    spec.invoices.map((i, n) =>
      invoiceRecord({
        customer_code: code,
        document_number: i.number ?? `${Date.now() % 1_000_000}${n}${randomBytes(2).toString('hex')}`,
        reference: `INV-${n}`,
        net_due_date: i.due,
        document_date: plusDays(i.due, -30),
        posting_date: plusDays(i.due, -30),
        amount_in_document_currency: i.amount ?? 1190,
        amount_in_local_currency: i.amount ?? 1190,
        ...(i.currency ? { currency: i.currency } : {}),
      }),
    ),
  );
  expect(pushed.body.results.every((r) => r.success), JSON.stringify(pushed.body)).toBe(true);
  return { partnerId: c.body.results[0]!.service_id!, invoiceIds: pushed.body.results.map((r) => r.service_id!), email };
}

/** An email template (through the API) in a fresh folder. */
export async function emailTemplate(stack: TestStack, o: Org, subject: string, body: string): Promise<string> {
  const folder = await stack.request('POST', '/v1/email-template-folders', { token: o.token, body: { name: `Dunning ${randomBytes(3).toString('hex')}` } });
  expect(folder.status, folder.text).toBe(200);
  const t = await stack.request('POST', '/v1/email-templates', { token: o.token, body: { folder_id: folder.body.id, name: 'Reminder', subject, body } });
  expect(t.status, t.text).toBe(200);
  return t.body.id as string;
}

export interface StepSpec {
  offset_days: number;
  channel: 'email' | 'sms' | 'task';
  email_template_id?: string;
  sms_template_id?: string;
  min_overdue_lc?: string;
}

/** A collection policy with its steps, through the policies API (POST /v2/collection-policies). */
export async function policy(stack: TestStack, o: Org, p: { segmentId?: string | null; enabled?: boolean; steps: StepSpec[] }): Promise<string> {
  const res = await stack.request('POST', '/v2/collection-policies', {
    token: o.token,
    body: { name: `Policy ${randomBytes(3).toString('hex')}`, segment_id: p.segmentId ?? null, is_enabled: p.enabled ?? true, steps: p.steps },
  });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

/** Starts a run through the API and waits until it ended; answers the ended run. */
export async function runCollections(stack: TestStack, o: Org, body: { dry_run?: boolean; as_of_date?: string } = {}): Promise<any> {
  const started = await stack.request('POST', '/v2/collections/runs', { token: o.token, body });
  expect(started.status, started.text).toBe(202);
  return waitForRun(stack, o, started.body.id);
}

export async function waitForRun(stack: TestStack, o: Org, runId: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await stack.request('GET', `/v2/collections/runs/${runId}`, { token: o.token });
    expect(r.status, r.text).toBe(200);
    if (r.body.status !== 'running') return r.body;
    if (Date.now() > deadline) throw new Error(`run ${runId} still running`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** The actions of a run (all pages). */
export async function actionsOf(stack: TestStack, token: string, query: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 0; ; page++) {
    const r = await stack.request('GET', `/v2/collections/actions?${query}&page=${page}&page_size=500`, { token });
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.data);
    if (r.body.next_page === null) return out;
  }
}
