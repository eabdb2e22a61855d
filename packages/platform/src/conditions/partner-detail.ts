/**
 * One partner as GET /v2/partners/{id} answers it, in ONE statement: its summary columns (in the
 * caller's business-unit scope), its open/overdue figures, which of the organization's tags it carries
 * and its effective assignee today (admin's `coverage_today`, the same read contract as coverage.ts).
 *
 * A named (prepared) statement: planning this join costs Postgres several times its execution, so each
 * pooled connection plans it once per statement text (the text changes only with the organization's tags).
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { LEDGER_TABLES, type BusinessUnitScope } from '../ledger/index.js';
import { COVERAGE_VIEW } from '../coverage.js';
import { AGGREGATE_SQL, compileCondition, ORG_CTE, PARTNER_SUMMARY_COLUMNS, type PartnerFigures, type PartnerSummaryRow } from './compiler.js';
import type { ResolvedTag } from './tags.js';

export interface PartnerDetailRow {
  partner: PartnerSummaryRow;
  /** the assignee, or the assignee's backup while the assignee is out of office today (null: nobody is assigned) */
  effective_assignee_id: string | null;
  figures: PartnerFigures;
  /** ids of the `tags` given that the partner carries (by hand or by rule) */
  tagIds: string[];
}

/** Null when the partner is not the organization's or outside `scope`; `tags`: the organization's tags with their rules. */
export async function partnerDetailRow(
  db: Knex,
  organizationId: string,
  partnerId: string,
  scope: BusinessUnitScope,
  tags: readonly ResolvedTag[],
): Promise<PartnerDetailRow | null> {
  const byId = new Map(tags.map((t) => [t.id, t]));
  const tagBindings: Knex.RawBinding[] = [];
  const tagCols = tags.map((t, i) => {
    const c = compileCondition({ field: 'tag', op: 'eq', value: t.id }, byId);
    tagBindings.push(...c.bindings);
    return `, ${c.sql} AS t${i}`;
  });
  const inScope = scope === '*' ? '' : 'AND (p.business_unit_id IS NULL OR p.business_unit_id = ANY(?::uuid[]))';
  const sql = `${ORG_CTE}
    SELECT ${PARTNER_SUMMARY_COLUMNS.map((c) => `p.${c}`).join(', ')},
      coalesce(cv.backup_user_id, p.assignee_id) AS effective_assignee_id,
      a.open_invoice_count, (a.open_cents / 100.0)::numeric(20, 2)::text AS total_open_lc,
      (a.overdue_cents / 100.0)::numeric(20, 2)::text AS overdue_lc, a.max_days_overdue
      ${tagCols.join('')}
    FROM ${LEDGER_TABLES.partners} p CROSS JOIN org
    ${AGGREGATE_SQL}
    LEFT JOIN ${COVERAGE_VIEW} cv ON cv.organization_id = p.organization_id AND cv.user_id = p.assignee_id
    WHERE p.organization_id = ? AND p.id = ? ${inScope}`;
  const bindings: Knex.RawBinding[] = [organizationId, ...tagBindings, organizationId, partnerId, ...(scope === '*' ? [] : [[...scope]])];
  const row = (await db.raw(sql, bindings).options({ name: statementName(sql) })).rows[0] as Record<string, unknown> | undefined;
  if (!row) return null;
  const partner = Object.fromEntries(PARTNER_SUMMARY_COLUMNS.map((c) => [c, row[c]])) as unknown as PartnerSummaryRow;
  return {
    partner,
    effective_assignee_id: (row.effective_assignee_id as string | null) ?? null,
    figures: {
      open_invoice_count: row.open_invoice_count as number,
      total_open_lc: row.total_open_lc as string,
      overdue_lc: row.overdue_lc as string,
      max_days_overdue: row.max_days_overdue as number,
    },
    tagIds: tags.filter((_, i) => row[`t${i}`] === true).map((t) => t.id),
  };
}

const names = new Map<string, string>();

/** A prepared statement's name for this text: the same on every connection, distinct per text (Postgres keeps 63 bytes). */
function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    if (names.size >= 1000) names.clear();
    name = `rp_partner_detail_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
    names.set(sql, name);
  }
  return name;
}
