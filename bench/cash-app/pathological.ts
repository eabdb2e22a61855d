/**
 * Case (c) of `npm run bench -- cash-app`: predicted overdue for the pathological customer (40
 * uncertain open invoices, a tier near the middle of the distribution) through the gateway, its
 * reported error bound, and the actual error against the exact answer by meet in the middle.
 */
import pg from 'pg';
import { blendedSurvival, SurvivalCurve, unpaidProbability } from '../../services/cash-app/src/domain/predicted-overdue.js';
import { exactTailByMeetInTheMiddle, tailProbability } from '../../services/cash-app/src/domain/tail-probability.js';
import { median, round1 } from './shared.js';

const PATHOLOGICAL_INVOICES = 40;
const PATHOLOGICAL_TIER = { days: 0, amount_lc: '1000000.00' };

/** (c): the pathological customer in an organization of its own. */
export async function pathologicalBenchmark(gatewayUrl: string, token: string, client: pg.Client, orgId: string, log: (m: string) => void) {
  let x = 20261122;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const amounts = Array.from({ length: PATHOLOGICAL_INVOICES }, () => Math.round((10000 + next() * 50000) * 100)); // cents: about 1,400,000.00 in all, ~1,000,000.00 expected at as_of
  const today = new Date().toISOString().slice(0, 10);
  const asOfDaysAhead = 30;
  const asOf = new Date(Date.now() + asOfDaysAhead * 86_400_000).toISOString().slice(0, 10);
  await client.query(
    `INSERT INTO integrations.partners (id, organization_id, origin, remote_id, account_number, name)
     VALUES (md5($1 || ':pp')::uuid, $1::uuid, 'middleware', 'PATH-1', 'PATH-1', 'Pathological customer')`,
    [orgId],
  );
  // open: invoice i (1..40, ordinality) is i days late today; closed: one invoice cleared L days after due for L = 0..120
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, currency, net_due_date, document_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', 'PO-' || i, md5($1 || ':pp')::uuid, 'PATH-1', '1000', '2026', 'PO-' || i, 'EUR',
       current_date - i::int, current_date - (i + 30)::int, a / 100.0, a / 100.0, a / 100.0, true
     FROM unnest($2::bigint[]) WITH ORDINALITY AS t(a, i)`,
    [orgId, amounts],
  );
  await client.query(
    `INSERT INTO integrations.documents (id, organization_id, origin, kind, remote_id, partner_id, customer_code, company_code, fiscal_year,
       document_number, currency, net_due_date, document_date, clearing_date, amount_in_document_currency, amount_in_local_currency, amount_open, status_open)
     SELECT gen_random_uuid(), $1::uuid, 'middleware', 'invoice', 'PC-' || l, md5($1 || ':pp')::uuid, 'PATH-1', '1000', '2025', 'PC-' || l, 'EUR',
       current_date - 400, current_date - 430, current_date - 400 + l, 100, 100, 0, false
     FROM generate_series(0, 120) l`,
    [orgId],
  );
  const body = JSON.stringify({ as_of_date: asOf, evaluated_at: today, tiers: [PATHOLOGICAL_TIER] });
  const request = async () => {
    const t = performance.now();
    const res = await fetch(`${gatewayUrl}/v2/analytics/predicted-overdue`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.status !== 200) throw new Error(`pathological predicted-overdue: ${res.status} ${text.slice(0, 500)}`);
    const tier = (JSON.parse(text) as { customers: { tripped_tiers: { trip_probability: number; trip_probability_max_error: number }[] }[] }).customers[0]?.tripped_tiers[0];
    if (!tier) throw new Error(`pathological predicted-overdue: the tier did not trip: ${text.slice(0, 500)}`);
    return { ms, tier };
  };
  await request(); // warm-up (starts the worker thread)
  const runs: number[] = [];
  let tier = (await request()).tier;
  for (let i = 0; i < 5; i++) {
    const r = await request();
    runs.push(r.ms);
    tier = r.tier;
  }
  // the same model in process: history 0..120 (the customer's and the organization's), p per invoice
  const history = Array.from({ length: 121 }, (_, l) => l);
  const survival = blendedSurvival(SurvivalCurve.fromValues(history), new SurvivalCurve(history.map((l) => [l, 1] as const)));
  const items = amounts.map((cents, i) => ({ cents, p: unpaidProbability(survival, i + 1, i + 1 + asOfDaysAhead) }));
  const threshold = Number(PATHOLOGICAL_TIER.amount_lc.replace('.', ''));
  let t = performance.now();
  const exact = exactTailByMeetInTheMiddle(items, threshold);
  const exactMs = performance.now() - t;
  t = performance.now();
  const inProcess = tailProbability(items, threshold);
  const boundedMs = performance.now() - t;
  const result = {
    invoices: PATHOLOGICAL_INVOICES,
    tier: PATHOLOGICAL_TIER,
    uncertain_invoices: items.filter((it) => it.p > 0 && it.p < 1).length,
    endpoint_ms: runs.map(round1),
    endpoint_median_ms: round1(median(runs)),
    trip_probability: tier.trip_probability,
    reported_max_error: tier.trip_probability_max_error,
    exact_probability: exact,
    actual_error: Math.abs(tier.trip_probability - exact),
    resolution_cents: inProcess.resolution,
    bounded_computation_ms: round1(boundedMs),
    exact_meet_in_the_middle_ms: round1(exactMs),
    targets: { error_within_bound: Math.abs(tier.trip_probability - exact) <= tier.trip_probability_max_error + 1e-12 },
  };
  log(JSON.stringify(result));
  return result;
}
