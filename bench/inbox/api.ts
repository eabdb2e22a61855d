/**
 * The inbox benchmark's conversation with the platform, all through the gateway: the ERP middleware
 * pushes the ledger (API key); an admin configures the mailbox (auto-assign at the default threshold)
 * and a collections run emails a reminder to every customer (so replies and bounces can thread to a
 * Message-ID we really sent); afterwards the inbox messages and remittances are read back.
 */
import { customerPushRecord, invoicePushRecord, type InboxLedger } from './ledger.js';
import type { ObservedAllocation, ObservedMessage, ObservedRemittance } from './score.js';

export interface Target {
  baseUrl: string;
  token: string;
  apiKey: string;
}

export async function call<T = Record<string, unknown>>(t: Target, method: string, path: string, body?: unknown, bearer = t.token): Promise<T> {
  const res = await fetch(t.baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 800)}`);
  return (text ? JSON.parse(text) : null) as T;
}

export async function allPages<T>(t: Target, path: string, pageSize = 100): Promise<T[]> {
  const out: T[] = [];
  for (let page = 0; ; page++) {
    const res = await call<{ data: T[]; next_page: number | null }>(t, 'GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&page_size=${pageSize}`);
    out.push(...res.data);
    if (res.next_page === null || res.next_page === undefined || res.data.length === 0) return out;
  }
}

/** Pushes customers and invoices; the platform ids by customer code and by invoice number. */
export async function pushLedger(t: Target, ledger: InboxLedger): Promise<{ partners: Map<string, string>; invoices: Map<string, string> }> {
  const push = async (what: 'customers' | 'invoices', records: Record<string, unknown>[], key: string) => {
    const ids = new Map<string, string>();
    for (let i = 0; i < records.length; i += 100) {
      const batch = records.slice(i, i + 100);
      const res = await call<{ results: { success: boolean; service_id: string | null; message: string | null }[] }>(t, 'POST', `/v2/integrations/providers/middleware/${what}`, batch, t.apiKey);
      res.results.forEach((r, j) => {
        if (!r.success || !r.service_id) throw new Error(`push ${what} ${String(batch[j]![key])}: ${r.message}`);
        ids.set(String(batch[j]![key]), r.service_id);
      });
    }
    return ids;
  };
  const partners = await push('customers', ledger.customers.map(customerPushRecord), 'customer_code');
  const invoices = await push('invoices', ledger.invoices.map(invoicePushRecord), 'document_number');
  return { partners, invoices };
}

/** Auto-assign on at the default threshold; answers the organization's inbound host. */
export async function configureMailbox(t: Target, threshold: number): Promise<string> {
  const s = await call<{ domain_send: { effective_inbound_hostname: string } }>(t, 'PUT', '/v2/mailbox-settings', {
    transport_provider: 'oauth_sync',
    google: { enabled: true },
    centralized_inbox: { auto_assign: true, auto_assign_threshold: threshold, matching_guidelines: null },
  });
  return s.domain_send.effective_inbound_hostname;
}

/**
 * A real collections run with one email step on the due date: every customer with an overdue invoice
 * gets one reminder. Waits for the run; the reminders land in the outbound SMTP sink.
 */
export async function sendReminders(t: Target): Promise<{ run: Record<string, unknown> }> {
  const folder = await call(t, 'POST', '/v1/email-template-folders', { name: 'Dunning' });
  const tpl = await call(t, 'POST', '/v1/email-templates', {
    folder_id: folder.id,
    name: 'Reminder',
    subject: 'Payment reminder',
    body: 'Dear {{ customer.name }},\nthe following invoices are overdue:{% for i in action.invoices %}\n{{ i.number }} {{ i.amount_open }} {{ i.currency }} ({{ i.days_overdue }} days){% endfor %}\nKind regards, Accounts Receivable',
  });
  await call(t, 'POST', '/v2/collection-policies', { name: 'Default', segment_id: null, is_enabled: true, steps: [{ offset_days: 0, channel: 'email', email_template_id: tpl.id }] });
  let run = await call(t, 'POST', '/v2/collections/runs', {});
  while (run.status === 'running') {
    await new Promise((r) => setTimeout(r, 500));
    run = await call(t, 'GET', `/v2/collections/runs/${String(run.id)}`);
  }
  return { run };
}

/** The Message-ID of the reminder each recipient address got, read from the outbound sink (MailDev). */
export async function remindersByRecipient(mailWebUrl: string): Promise<Map<string, string>> {
  const mails = (await (await fetch(`${mailWebUrl}/email`)).json()) as { messageId?: string; headers?: Record<string, string>; to?: { address: string }[] }[];
  const out = new Map<string, string>();
  for (const m of mails) {
    const id = m.headers?.['message-id'] ?? (m.messageId ? `<${m.messageId.replace(/^<|>$/g, '')}>` : null);
    for (const to of m.to ?? []) if (id) out.set(to.address.toLowerCase(), id);
  }
  return out;
}

interface ApiInboxMessage {
  id: string;
  message_id: string;
  partner_id: string | null;
  match_confidence: number | null;
  status: string;
  category: string | null;
  processing_state: string;
  modified_at: string;
}

/** Every inbox message of the organization by Message-ID, with its partner as a customer code; the latest modified_at. */
export async function readInbox(t: Target, codeOf: ReadonlyMap<string, string>): Promise<{ messages: Map<string, ObservedMessage>; lastModified: number }> {
  const rows = await allPages<ApiInboxMessage>(t, '/v2/inbox/messages');
  const messages = new Map<string, ObservedMessage>();
  let lastModified = 0;
  for (const m of rows) {
    messages.set(m.message_id, { id: m.id, message_id: m.message_id, partner_code: m.partner_id ? (codeOf.get(m.partner_id) ?? `unknown:${m.partner_id}`) : null, match_confidence: m.match_confidence, status: m.status, category: m.category, processing_state: m.processing_state });
    lastModified = Math.max(lastModified, Date.parse(m.modified_at));
  }
  return { messages, lastModified };
}

interface ApiRemittance {
  id: string;
  email: { id: string; message_id: string } | null;
  transaction_amount: number | null;
  agent_error_code: string | null;
  allocations: { invoice_number: string; invoice_id: string | null; amount_paid: number; amount_discount: number; amount_withheld: number }[];
}

/** The remittances read from email, grouped by the Message-ID of the message they came from. */
export async function readRemittances(t: Target, numberOf: ReadonlyMap<string, string>): Promise<Map<string, ObservedRemittance[]>> {
  const rows = await allPages<ApiRemittance>(t, '/v1/remittances');
  const out = new Map<string, ObservedRemittance[]>();
  for (const r of rows) {
    if (!r.email) continue;
    const allocations: ObservedAllocation[] = r.allocations.map((a) => ({
      invoice_number: a.invoice_number,
      resolved_number: a.invoice_id ? (numberOf.get(a.invoice_id) ?? null) : null,
      amount_paid: a.amount_paid.toFixed(2),
      amount_discount: a.amount_discount.toFixed(2),
      amount_withheld: a.amount_withheld.toFixed(2),
    }));
    const list = out.get(r.email.message_id) ?? [];
    list.push({ id: r.id, transaction_amount: r.transaction_amount === null ? null : r.transaction_amount.toFixed(2), agent_error_code: r.agent_error_code, allocations });
    out.set(r.email.message_id, list);
  }
  return out;
}
