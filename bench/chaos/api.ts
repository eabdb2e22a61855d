/** HTTP through the gateway (as an API client), MailDev's REST API, and the ledger/statement fixtures of the fault-injection suite. */
import pg from 'pg';

/** A parsed JSON answer: read as each scenario expects it (its invariants check what matters). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Body = any;

export interface Res<T = Body> {
  status: number;
  headers: Headers;
  body: T;
  ms: number;
  error?: string;
}

export class Api {
  constructor(
    readonly baseUrl: string,
    readonly mailUrl: string,
  ) {}

  async call<T = Body>(method: string, path: string, o: { token?: string; body?: unknown; timeoutMs?: number } = {}): Promise<Res<T>> {
    const headers: Record<string, string> = {};
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';
    const t0 = performance.now();
    try {
      const res = await fetch(this.baseUrl + path, {
        method,
        headers,
        body: o.body === undefined ? undefined : JSON.stringify(o.body),
        signal: AbortSignal.timeout(o.timeoutMs ?? 60_000),
      });
      const text = await res.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      return { status: res.status, headers: res.headers, body: body as T, ms: performance.now() - t0 };
    } catch (err) {
      // no answer at all (connection refused/reset, timeout): status 0
      return { status: 0, headers: new Headers(), body: null as T, ms: performance.now() - t0, error: (err as Error).message };
    }
  }

  /** Every message MailDev holds for `address` (lower-cased comparison). */
  async mailTo(address: string): Promise<{ subject: string; id: string }[]> {
    const res = await fetch(`${this.mailUrl}/email`, { signal: AbortSignal.timeout(10_000) });
    const all = (await res.json()) as { id: string; subject: string; to?: { address: string }[] }[];
    return all.filter((m) => (m.to ?? []).some((t) => t.address.toLowerCase() === address.toLowerCase()));
  }

  /** Every message MailDev holds for any of `addresses`, with its recipients, subject and plain text. */
  async mailsFor(addresses: string[]): Promise<{ id: string; to: string[]; subject: string; text: string }[]> {
    const res = await fetch(`${this.mailUrl}/email`, { signal: AbortSignal.timeout(10_000) });
    const all = (await res.json()) as { id: string; subject: string; text?: string; to?: { address: string }[] }[];
    const wanted = new Set(addresses.map((a) => a.toLowerCase()));
    return all
      .map((m) => ({ id: m.id, to: (m.to ?? []).map((t) => t.address.toLowerCase()), subject: m.subject, text: m.text ?? '' }))
      .filter((m) => m.to.some((a) => wanted.has(a)));
  }

  /** The headers of one MailDev message (lower-case names). */
  async mailHeaders(id: string): Promise<Record<string, string>> {
    const res = await fetch(`${this.mailUrl}/email/${encodeURIComponent(id)}`, { signal: AbortSignal.timeout(10_000) });
    const m = (await res.json()) as { headers?: Record<string, string> };
    return Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  }

  async mailCounts(addresses: string[]): Promise<Map<string, number>> {
    const res = await fetch(`${this.mailUrl}/email`, { signal: AbortSignal.timeout(10_000) });
    const all = (await res.json()) as { to?: { address: string }[] }[];
    const counts = new Map(addresses.map((a) => [a.toLowerCase(), 0]));
    for (const m of all) for (const t of m.to ?? []) {
      const a = t.address.toLowerCase();
      if (counts.has(a)) counts.set(a, counts.get(a)! + 1);
    }
    return counts;
  }
}

/** A read-only cross-check straight on PostgreSQL (no endpoint lists the ledger or counts duplicate rows). */
export async function sql<T = Body>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => {});
  await client.connect();
  try {
    return (await client.query(text, params as unknown[])).rows as T[];
  } finally {
    await client.end().catch(() => {});
  }
}

export interface LedgerInvoice {
  number: string;
  amount: string;
  customer: number;
}

export function customerRecord(code: string, name: string, email: string) {
  return {
    customer_code: code,
    name1: name,
    name2: '',
    name3: '',
    street: 'Hauptstrasse',
    house_num1: '12',
    house_num2: '',
    post_code1: '10115',
    city1: 'Berlin',
    city2: '',
    region: 'BE',
    country: 'DE',
    accounting_clerk: '01',
    accounting_clerk_name: 'Ben Clerk',
    smtp_addr: email,
    tel_number: '+49 30 1234567',
    telnr_long: '+49301234567',
    tax_jurisdiction: '',
    payment_method: 'T',
    search_term: code,
    vendor_account_number: '',
    company_code: '1000',
  };
}

export function invoiceRecord(number: string, customerCode: string, amount: string) {
  const n = Number(amount);
  return {
    document_number: number,
    company_code: '1000',
    customer_code: customerCode,
    currency: 'EUR',
    document_type: 'RV',
    invoice_doc_type: 'F2',
    fiscal_year: '2026',
    exchange_rate: '1.00000',
    reference: `INV-${number}`,
    assignment: '',
    text: 'Goods delivered',
    reason_code: '',
    clearing_document_number: '',
    document_date: '2026-09-01',
    net_due_date: '2026-10-01',
    posting_date: '2026-09-01',
    clearing_date: null,
    amount_in_document_currency: n,
    amount_in_local_currency: n,
    status_open: true,
    debit_credit_indicator: 'S',
    line_items: [{ line_number: 1, description: 'Widgets', quantity: 1, unit_amount: n, total_amount: n }],
  };
}

/** A JSON bank statement paying `invoices` one transaction each (remittance names the invoice, payer named like the customer). */
export function statementBody(tag: string, invoices: LedgerInvoice[], customerName: (i: number) => string) {
  const day = new Date().toISOString().slice(0, 10);
  return {
    account: 'DE44500105175407324931',
    currency: 'EUR',
    statement_number: `CHAOS-${tag}`,
    transactions: invoices.map((inv, i) => ({
      amount: inv.amount,
      booking_date: day,
      value_date: day,
      counterparty_name: customerName(inv.customer),
      remittance_information: `Invoice INV-${inv.number}`,
      bank_reference: `${tag}-${String(i + 1).padStart(6, '0')}`,
    })),
  };
}

export const chunk = <T>(xs: T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
