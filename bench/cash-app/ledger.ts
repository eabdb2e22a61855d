/**
 * A large ledger straight into a fresh database (set-based INSERT … SELECT over generate_series), shared
 * by the predicted-overdue, collections and reports benchmarks.
 */
import pg from 'pg';

export interface LedgerVolume {
  customers: number;
  open: number;
  closed: number;
  log?: (msg: string) => void;
}

/**
 * Fill integrations.partners and integrations.documents for one organization, fast (set-based
 * INSERT … SELECT over generate_series; ids derived from md5 so partners and documents line up).
 *   - customers: `C-<n>`, account `ACC-<n>`, business unit round robin over four
 *   - open invoices: due between today − 119 and today + 30 days, 50.00..10,000.00, 20% in USD at
 *     0.92 to EUR, 10% partially open (40% left), 2% are credit memos (ignored by the aging)
 *   - closed invoices: due in the last two years, cleared L days after due, L skewed by a customer
 *     profile (1..5): L = floor(u²·60·profile/3) − 5
 */
export async function generateLedger(client: pg.Client, orgId: string, v: LedgerVolume): Promise<{ businessUnits: string[] }> {
  const log = v.log ?? (() => {});
  await client.query(`SET synchronous_commit = off`);
  await client.query(`SET maintenance_work_mem = '256MB'`);
  // Bulk load without the secondary indexes (building them afterwards is far cheaper than maintaining them row by row).
  const { rows: indexes } = await client.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
     WHERE i.schemaname = 'integrations' AND i.tablename IN ('documents', 'partners')
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
  );
  for (const ix of indexes) await client.query(`DROP INDEX integrations.${ix.name}`);
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, business_unit_id, origin, remote_id, account_number, name)
     SELECT md5($1 || ':p:' || i)::uuid, $1::uuid, md5($1 || ':bu:' || (1 + i % 4))::uuid, 'middleware', 'C-' || i,
            'ACC-' || lpad(i::text, 6, '0'), 'Customer ' || i
     FROM generate_series(1, $2::int) i`,
    [orgId, v.customers],
  );
  log(`partners: ${v.customers}`);
  const chunk = 250_000;
  for (let from = 1; from <= v.open; from += chunk) {
    const to = Math.min(v.open, from + chunk - 1);
    await client.query(
      `INSERT INTO integrations.documents (id, organization_id, business_unit_id, origin, kind, remote_id, partner_id, customer_code,
         company_code, fiscal_year, document_number, currency, net_due_date, document_date, amount_in_document_currency,
         amount_in_local_currency, amount_open, status_open)
       SELECT (substr(md5($1), 1, 8) || '-0000-7000-8001-' || lpad(to_hex(g), 12, '0'))::uuid, $1::uuid, md5($1 || ':bu:' || (1 + c % 4))::uuid, 'middleware',
              CASE WHEN g % 50 = 0 THEN 'credit_memo' ELSE 'invoice' END, 'O' || g, md5($1 || ':p:' || c)::uuid, 'C-' || c,
              '1000', '2026', 'O' || g, CASE WHEN usd THEN 'USD' ELSE 'EUR' END, due, due - 30, amount,
              CASE WHEN usd THEN round(amount * 0.92, 2) ELSE amount END,
              CASE WHEN g % 10 = 3 THEN round(amount * 0.4, 2) ELSE amount END, true
       FROM (SELECT g, 1 + floor(random() * $4::int)::int AS c, current_date + (30 - floor(random() * 150))::int AS due,
                    round((50 + random() * 9950)::numeric, 2) AS amount, random() < 0.2 AS usd
             FROM generate_series($2::int, $3::int) g) s`,
      [orgId, from, to, v.customers],
    );
    log(`open invoices: ${to}`);
  }
  for (let from = 1; from <= v.closed; from += chunk) {
    const to = Math.min(v.closed, from + chunk - 1);
    await client.query(
      `INSERT INTO integrations.documents (id, organization_id, business_unit_id, origin, kind, remote_id, partner_id, customer_code,
         company_code, fiscal_year, document_number, currency, net_due_date, document_date, clearing_date,
         amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
       SELECT (substr(md5($1), 1, 8) || '-0000-7000-8002-' || lpad(to_hex(g), 12, '0'))::uuid, $1::uuid, md5($1 || ':bu:' || (1 + c % 4))::uuid,
              'middleware', 'invoice', 'X' || g,
              md5($1 || ':p:' || c)::uuid, 'C-' || c, '1000', '2025', 'X' || g, 'EUR', due, due - 30,
              due + (floor(power(random(), 2) * 60 * (1 + c % 5) / 3) - 5)::int, amount, amount, 0, false
       FROM (SELECT g, 1 + floor(random() * $4::int)::int AS c, current_date - 1 - floor(random() * 720)::int AS due,
                    round((50 + random() * 9950)::numeric, 2) AS amount
             FROM generate_series($2::int, $3::int) g) s`,
      [orgId, from, to, v.customers],
    );
    log(`closed invoices: ${to}`);
  }
  for (const ix of indexes) await client.query(ix.def);
  log(`indexes rebuilt: ${indexes.length}`);
  await client.query('VACUUM ANALYZE integrations.partners');
  await client.query('VACUUM ANALYZE integrations.documents');
  await client.query('CHECKPOINT'); // write the bulk load back now, not during the measured runs
  log('vacuum analyze, checkpoint');
  const { rows } = await client.query<{ id: string }>(`SELECT md5($1 || ':bu:' || i)::uuid::text AS id FROM generate_series(1, 4) i`, [orgId]);
  return { businessUnits: rows.map((r) => r.id) };
}
