/**
 * The predicted-overdue answer (spec 4.3 rule 2): reads the organization's open invoices and history
 * through the store and runs the probability model (predicted-overdue.ts) on each customer as its
 * row arrives, large cases on the shared worker-thread pool.
 */
import { checkBusinessUnitReferences, NotFoundError, type BusinessUnitScope } from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import { loadPredictedOverdue } from '../store/predicted-overdue.js';
import { daysBetween, PredictedOverdueAssembler, type PredictedOverdueCustomer } from './predicted-overdue.js';
import { sharedTailPool } from './tail-pool.js';

function todayIn(timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

export interface PredictedOverdueRequest {
  asOfDate: string;
  /** The day taken as today (default: today in the organization's time zone). */
  evaluatedAt?: string;
  tiers: { days: number; amount_lc: string }[];
  businessUnitIds?: string[];
}

export interface PredictedOverdueResult {
  /** The organization's base currency, which the amounts are in. */
  currency: string;
  customers: PredictedOverdueCustomer[];
  unconvertible: { currency: string; invoice_count: number }[];
}

/** Customers whose open invoices are likely to trip a tier by `asOfDate`; unknown business units are a 422, an unknown organization a 404. */
export async function predictOverdue(
  deps: Pick<CashAppDeps, 'db'>,
  caller: { organizationId: string; scope: BusinessUnitScope },
  req: PredictedOverdueRequest,
): Promise<PredictedOverdueResult> {
  if (req.businessUnitIds) await checkBusinessUnitReferences(deps.db, caller.organizationId, caller.scope, req.businessUnitIds, ['body', 'business_unit_id__in']);
  // Each customer is assembled as its row arrives, while the aggregation goes on with the next ones.
  const pool = sharedTailPool();
  let assembler: PredictedOverdueAssembler | undefined;
  const data = await loadPredictedOverdue(
    deps.db,
    caller.organizationId,
    {
      asOfDate: req.asOfDate,
      tiers: req.tiers.map((t) => ({ days: t.days, amountLc: t.amount_lc })),
      businessUnitIds: req.businessUnitIds,
      accessibleBusinessUnits: caller.scope,
    },
    ({ organization, organizationHistory }) => {
      const today = req.evaluatedAt ?? todayIn(organization.timezone);
      const a = new PredictedOverdueAssembler(organizationHistory, req.tiers, daysBetween(today, req.asOfDate), { offload: (t) => pool.estimate(t) });
      assembler = a;
      return (row) => a.add(row);
    },
  );
  if (!data || !assembler) throw new NotFoundError('Unknown organization.');
  return { currency: data.organization.base_currency, customers: await assembler.finish(), unconvertible: data.unconvertible };
}
