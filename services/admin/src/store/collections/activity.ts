/**
 * A customer's timeline (GET /v2/partners/{partner_id}/activity): admin's own rows (collection
 * messages, tasks, promises to pay, disputes; migration 012; inbox messages, migration 016) and cash-app's (receipts, payments
 * applied; through the kernel's partner-activity.ts) merged in one query, newest first.
 *
 * Each side selects PARTNER_ACTIVITY_COLUMNS in order. Items: an email or text once sent or failed
 * (a message still `sending` is not history yet); a task when created and when done; a promise to
 * pay when made and when kept, broken or cancelled; a dispute when opened and when resolved or
 * rejected. Ties on `occurred_at` are broken by type, reference and summary so pages never overlap.
 */
import { cashAppPartnerActivity, type Db, type PartnerActivityRow, type PartnerActivityType } from '@rp/platform';
import { INBOX_TIMELINE_SQL } from '../inbox/messages.js';

interface Branch {
  types: readonly PartnerActivityType[];
  sql: string;
}

/** Summaries quote at most this many characters of free text (a text's body, a note, a resolution). */
const QUOTE = 100;
const quoted = (expr: string) => `left(${expr}, ${QUOTE}) || CASE WHEN char_length(${expr}) > ${QUOTE} THEN '…' ELSE '' END`;

// Every branch is filtered by organization_id = ? AND partner_id = ? (two bindings, in that order).
const BRANCHES: Branch[] = [
  {
    types: ['collection_email', 'collection_sms'],
    sql: `SELECT CASE m.channel WHEN 'email' THEN 'collection_email' ELSE 'collection_sms' END, coalesce(m.sent_at, m.modified_at),
            CASE WHEN m.channel = 'email'
                 THEN 'Email "' || coalesce(m.subject, '') || '" ' || CASE m.status WHEN 'sent' THEN 'sent to ' || m.to_address ELSE 'to ' || m.to_address || ' failed' END
                 ELSE 'Text ' || CASE m.status WHEN 'sent' THEN 'sent to ' || m.to_address ELSE 'to ' || m.to_address || ' failed' END || ': "' || ${quoted('m.body')} || '"'
            END,
            NULL::text, NULL::text, 'collection_action', m.action_id::text
          FROM collection_messages m
         WHERE m.organization_id = ? AND m.partner_id = ? AND m.status IN ('sent', 'failed') AND m.channel = ANY(?::text[])`,
  },
  {
    types: ['task'],
    sql: `SELECT 'task', t.created_at, 'Task created: ' || t.title, NULL::text, NULL::text, 'task', t.id::text
          FROM collection_tasks t WHERE t.organization_id = ? AND t.partner_id = ?
        UNION ALL
        SELECT 'task', t.completed_at, 'Task done: ' || t.title || coalesce(' (' || ${quoted('t.note')} || ')', ''), NULL::text, NULL::text, 'task', t.id::text
          FROM collection_tasks t WHERE t.organization_id = ? AND t.partner_id = ? AND t.status = 'done'`,
  },
  {
    types: ['promise_to_pay'],
    sql: `SELECT 'promise_to_pay', p.created_at,
            'Promise to pay {amount} by ' || to_char(p.promised_date, 'YYYY-MM-DD') || ' for ' || cardinality(p.invoice_ids)
              || CASE WHEN cardinality(p.invoice_ids) = 1 THEN ' invoice' ELSE ' invoices' END,
            p.amount::text, p.currency::text, 'promise_to_pay', p.id::text
          FROM promises_to_pay p WHERE p.organization_id = ? AND p.partner_id = ?
        UNION ALL
        SELECT 'promise_to_pay', p.resolved_at, 'Promise to pay {amount} by ' || to_char(p.promised_date, 'YYYY-MM-DD') || ' ' || p.status,
            p.amount::text, p.currency::text, 'promise_to_pay', p.id::text
          FROM promises_to_pay p WHERE p.organization_id = ? AND p.partner_id = ? AND p.status <> 'open'`,
  },
  {
    types: ['dispute'],
    sql: `SELECT 'dispute', d.created_at, 'Dispute opened (' || replace(d.reason_code, '_', ' ') || ')' || CASE WHEN d.amount IS NULL THEN '' ELSE ' for {amount}' END,
            d.amount::text, d.currency::text, 'dispute', d.id::text
          FROM disputes d WHERE d.organization_id = ? AND d.partner_id = ?
        UNION ALL
        SELECT 'dispute', d.resolved_at, 'Dispute ' || d.status || ' (' || replace(d.reason_code, '_', ' ') || ')' || coalesce(': ' || ${quoted('d.resolution')}, ''),
            d.amount::text, d.currency::text, 'dispute', d.id::text
          FROM disputes d WHERE d.organization_id = ? AND d.partner_id = ? AND d.status <> 'open'`,
  },
  // every message of the AR inbox matched to the customer, at its receipt
  { types: ['reply'], sql: INBOX_TIMELINE_SQL },
];

function admins(organizationId: string, partnerId: string, types: readonly PartnerActivityType[] | undefined): { sql: string; bindings: unknown[] }[] {
  const out: { sql: string; bindings: unknown[] }[] = [];
  for (const b of BRANCHES) {
    const wanted = types ? b.types.filter((t) => types.includes(t)) : b.types;
    if (!wanted.length) continue;
    const pairs = (b.sql.match(/partner_id = \?/g) ?? []).length;
    const bindings: unknown[] = [];
    for (let i = 0; i < pairs; i++) bindings.push(organizationId, partnerId);
    // the messages branch's channel filter
    if (b.types.includes('collection_email')) bindings.push(wanted.map((t) => (t === 'collection_email' ? 'email' : 'sms')));
    out.push({ sql: b.sql, bindings });
  }
  return out;
}

/** One page of the customer's timeline, newest first, and how many items it has in all. */
export async function partnerActivityPage(
  db: Db,
  organizationId: string,
  partnerId: string,
  types: readonly PartnerActivityType[] | undefined,
  offset: number,
  limit: number,
): Promise<{ rows: PartnerActivityRow[]; total: number }> {
  const parts = admins(organizationId, partnerId, types);
  if (!types || types.some((t) => t === 'receipt' || t === 'payment_applied')) {
    const cash = cashAppPartnerActivity(db, organizationId, partnerId, types).toSQL();
    parts.push({ sql: cash.sql, bindings: [...cash.bindings] });
  }
  if (!parts.length) return { rows: [], total: 0 };
  const union = parts.map((p) => `(${p.sql})`).join('\nUNION ALL\n');
  const bindings = parts.flatMap((p) => p.bindings);
  const [rows, count] = await Promise.all([
    db.raw(
      `SELECT * FROM (${union}) AS activity (type, occurred_at, summary, amount, currency, ref_object, ref_id)
        ORDER BY occurred_at DESC, type DESC, ref_id DESC, summary DESC OFFSET ? LIMIT ?`,
      [...bindings, offset, limit] as never[],
    ),
    db.raw(`SELECT count(*)::int AS total FROM (${union}) AS activity`, bindings as never[]),
  ]);
  return { rows: rows.rows as PartnerActivityRow[], total: (count.rows[0] as { total: number }).total };
}
