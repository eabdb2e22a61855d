import {
  getOrganizationProfile,
  organizationLatenessHistogram,
  predictedOverdueRows,
  type Db,
  type OrganizationProfile,
  type PredictedOverdueQuery,
  type PredictedOverdueRow,
} from '@rp/platform';

export interface PredictedOverdueData {
  organization: OrganizationProfile | null;
  rows: PredictedOverdueRow[];
  organizationHistory: [number, number][];
}

/**
 * Everything predicted overdue reads, through the kernel ledger module (integrations owns the
 * ledger): the single aggregation statement over open invoices, the organization's lateness
 * histogram and its profile (base currency, timezone), run concurrently.
 */
export async function loadPredictedOverdue(db: Db, organizationId: string, q: PredictedOverdueQuery): Promise<PredictedOverdueData> {
  const [organization, rows, organizationHistory] = await Promise.all([
    getOrganizationProfile(db, organizationId),
    predictedOverdueRows(db, organizationId, q),
    organizationLatenessHistogram(db, organizationId),
  ]);
  return { organization, rows, organizationHistory };
}
