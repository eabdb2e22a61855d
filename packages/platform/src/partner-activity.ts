/**
 * A customer's timeline, read side of cash-app's part: the view `cash_app.partner_activity`
 * (cash-app migration 018) lists the receipts emailed to a customer and its approved payments. This
 * module is the only reader of that view outside cash-app, as coverage.ts is of admin's
 * coverage_today: cash-app may change its tables freely as long as the view keeps its columns.
 * Admin merges these rows with its own (collection messages, tasks, promises to pay, disputes) into
 * GET /v2/partners/{partner_id}/activity.
 *
 * Rows share one shape on both sides: `summary` is English text in which `{amount}` stands for
 * `amount` in `currency`, formatted by `activitySummary` to the currency's minor units (so no
 * formatting rule lives in SQL, and amounts are never rounded to two places blindly).
 */
import type { Knex } from 'knex';
import { formatInMinorUnits } from './currency-totals.js';

export const PARTNER_ACTIVITY_VIEW = 'cash_app.partner_activity';

/** Every type of timeline item; `reply` is reserved for replies received in the collections inbox. */
export const PARTNER_ACTIVITY_TYPES = ['collection_email', 'collection_sms', 'task', 'receipt', 'promise_to_pay', 'dispute', 'payment_applied', 'reply'] as const;
export type PartnerActivityType = (typeof PARTNER_ACTIVITY_TYPES)[number];

/** The types cash-app's view answers. */
export const CASH_APP_ACTIVITY_TYPES: readonly PartnerActivityType[] = ['receipt', 'payment_applied'];

/** One row of a timeline query, before `activitySummary`. */
export interface PartnerActivityRow {
  type: PartnerActivityType;
  occurred_at: Date;
  summary: string;
  amount: string | null;
  currency: string | null;
  ref_object: string;
  ref_id: string;
}

/** The columns every side of the timeline selects, in this order (a UNION ALL matches them by position). */
export const PARTNER_ACTIVITY_COLUMNS = ['type', 'occurred_at', 'summary', 'amount', 'currency', 'ref_object', 'ref_id'] as const;

/**
 * Cash-app's rows of one customer, as a subquery to UNION with the caller's own (columns
 * PARTNER_ACTIVITY_COLUMNS; `types`: only these, none: all).
 */
export function cashAppPartnerActivity(db: Knex, organizationId: string, partnerId: string, types?: readonly PartnerActivityType[]): Knex.QueryBuilder {
  const q = db(PARTNER_ACTIVITY_VIEW)
    .select('type', 'occurred_at', 'summary', db.raw('amount::text AS amount'), 'currency', 'ref_object', db.raw('ref_id::text AS ref_id'))
    .where({ organization_id: organizationId, partner_id: partnerId });
  if (types) void q.whereIn('type', [...types]);
  return q;
}

/** The row's summary with `{amount}` replaced by its amount in the currency's minor units and the currency code. */
export function activitySummary(row: Pick<PartnerActivityRow, 'summary' | 'amount' | 'currency'>): string {
  if (!row.summary.includes('{amount}')) return row.summary;
  const money = row.amount !== null && row.currency ? `${formatInMinorUnits(row.amount, row.currency)} ${row.currency.trim()}` : 'an amount';
  return row.summary.replaceAll('{amount}', money);
}
