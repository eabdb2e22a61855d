import type { Knex } from 'knex';

export const name = '018_partner_activity';

/**
 * `partner_activity`: cash-app's read contract for a customer's timeline (GET
 * /v2/partners/{partner_id}/activity, served by admin through the kernel's partner-activity.ts,
 * the view's one reader). One row per thing that happened to a customer here:
 *
 * - `receipt`: a payment receipt emailed to the customer (outreach record `sent`), at `sent_at`;
 *   ref `outreach_record`.
 * - `payment_applied`: an approved payment of the customer, at `approved_at`, with how many
 *   invoices it was allocated to; ref `payment`.
 *
 * `summary` is English text in which `{amount}` stands for `amount` in `currency` (the reader
 * formats it to the currency's minor units: no formatting rules live in SQL). Business-unit scope is
 * the customer's (the reader checks the partner), so rows carry none. Cash-app may change its
 * tables freely as long as the view keeps these columns.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE VIEW partner_activity AS
      SELECT o.organization_id, o.partner_id, 'receipt'::text AS type, o.sent_at AS occurred_at,
             (CASE WHEN p.id IS NULL THEN 'Payment receipt' ELSE 'Payment receipt for {amount}' END
               || ' emailed to ' || coalesce(o.recipient, 'the customer'))::text AS summary,
             p.amount, p.currency::text AS currency, 'outreach_record'::text AS ref_object, o.id AS ref_id
        FROM outreach_records o
        LEFT JOIN payments p ON p.id = o.payment_id
       WHERE o.outreach_type = 'payment_receipt' AND o.status = 'sent' AND o.partner_id IS NOT NULL AND o.sent_at IS NOT NULL
      UNION ALL
      SELECT p.organization_id, p.partner_id, 'payment_applied'::text, p.approved_at,
             ('Payment of {amount} applied to ' || n.invoices || CASE WHEN n.invoices = 1 THEN ' invoice' ELSE ' invoices' END)::text,
             p.amount, p.currency::text, 'payment'::text, p.id
        FROM payments p
        CROSS JOIN LATERAL (SELECT count(*) AS invoices FROM payment_allocations a WHERE a.payment_id = p.id) n
       WHERE p.status = 'approved' AND p.partner_id IS NOT NULL AND p.approved_at IS NOT NULL;

    -- the timeline asks for one customer's rows
    CREATE INDEX IF NOT EXISTS payments_partner_approved_idx ON payments (organization_id, partner_id, approved_at DESC) WHERE status = 'approved';
    CREATE INDEX IF NOT EXISTS outreach_records_partner_idx ON outreach_records (organization_id, partner_id, sent_at DESC) WHERE status = 'sent';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP VIEW IF EXISTS partner_activity;
    DROP INDEX IF EXISTS payments_partner_approved_idx;
    DROP INDEX IF EXISTS outreach_records_partner_idx;
  `);
}
