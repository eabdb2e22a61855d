/** What predicted overdue reads through the kernel ledger module: profile, lateness history, conversion factors and the open-invoice aggregation. */
import {
  getOrganizationProfile,
  organizationLatenessHistogram,
  predictedOverdueRows,
  unconvertibleOpenInvoices,
  type Db,
  type OrganizationProfile,
  type PredictedOverdueQuery,
  type PredictedOverdueRow,
} from '@rp/platform';
import { conversionFactorsTo } from './exchange-rates.js';

export interface PredictedOverdueData {
  organization: OrganizationProfile;
  rows: PredictedOverdueRow[];
  organizationHistory: [number, number][];
  /** open invoices in scope that cannot be converted to the base currency, per currency */
  unconvertible: { currency: string; invoice_count: number }[];
}

/**
 * Everything predicted overdue reads, through the kernel ledger module (integrations owns the
 * ledger): the organization's profile (base currency) and lateness histogram, the conversion
 * factors of the stored exchange rates (latest on or before as_of), then — concurrently — the single
 * aggregation statement over open invoices and the count of those without a rate. Null for an
 * unknown organization.
 *
 * With `consume`, the customers' rows are not collected: once the profile and the histogram are
 * known (before the aggregation starts), `consume` is called with them and returns the function that
 * gets each row as it arrives, so the caller's work on a customer overlaps the aggregation of the
 * next ones. `rows` is then empty.
 */
export async function loadPredictedOverdue(
  db: Db,
  organizationId: string,
  q: Omit<PredictedOverdueQuery, 'conversion'>,
  consume?: (known: { organization: OrganizationProfile; organizationHistory: [number, number][] }) => (row: PredictedOverdueRow) => void,
): Promise<PredictedOverdueData | null> {
  // The lateness histogram (over the closed invoices) needs nothing else: it runs alongside the
  // profile → conversion factors chain, off its critical path.
  const history = organizationLatenessHistogram(db, organizationId);
  history.catch(() => {}); // awaited below; an early return must not leave its rejection unhandled
  const organization = await getOrganizationProfile(db, organizationId);
  if (!organization) return null;
  const factors = await conversionFactorsTo(db, organizationId, organization.base_currency.trim(), q.asOfDate);
  const conversion = { currencies: [...factors.keys()], factors: [...factors.values()] };
  const onRow = consume ? consume({ organization, organizationHistory: await history }) : undefined;
  const [rows, unconvertible, organizationHistory] = await Promise.all([
    predictedOverdueRows(db, organizationId, { ...q, conversion }, onRow),
    unconvertibleOpenInvoices(db, organizationId, q, conversion.currencies),
    history,
  ]);
  return { organization, rows, organizationHistory, unconvertible };
}
