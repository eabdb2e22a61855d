/**
 * Business-unit scope of knowledge (articles, versions, proposals, search, stats). Knowledge items may
 * name a customer (`customer_id`, a ledger partner); an item is visible to a caller unless that partner
 * is tied to a business unit outside the caller's scope (the ledger's rule: no customer, an unknown
 * partner or a partner without a unit stays visible). The partner is read through the kernel ledger
 * module's `partnerOutOfScopeSql`; knowledge writes no SQL of its own against the integrations schema.
 * `segment_id` plays no part: segments belong to the organization, not to a business unit.
 */
import type { Knex } from 'knex';
import { partnerOutOfScopeSql, type BusinessUnitScope, type SqlFragment } from '@rp/platform';

/** SQL true when the customer named by `customerExpr` (a trusted column expression) is visible; null for scope '*'. */
export function customerVisibleSql(customerExpr: string, scope: BusinessUnitScope): SqlFragment | null {
  const out = partnerOutOfScopeSql(customerExpr, scope);
  return out && { sql: `NOT ${out.sql}`, bindings: out.bindings };
}

/**
 * SQL true when the proposal `alias` is visible: its own customer is, and so is the current customer of
 * its target article (a revise or archive proposal of an article the caller cannot see is hidden with
 * it: approving it would change that article). Null for scope '*'.
 */
export function proposalVisibleSql(alias: string, scope: BusinessUnitScope): SqlFragment | null {
  const own = partnerOutOfScopeSql(`${alias}.customer_id`, scope);
  const target = partnerOutOfScopeSql('scope_ta.customer_id', scope);
  if (!own || !target) return null;
  return {
    sql:
      `(NOT ${own.sql} AND NOT EXISTS (SELECT 1 FROM articles scope_ta WHERE scope_ta.id = ${alias}.article_id ` +
      `AND scope_ta.organization_id = ${alias}.organization_id AND ${target.sql}))`,
    bindings: [...own.bindings, ...target.bindings],
  };
}

/** The fragment as `AND (...)` for hand-written SQL, with its bindings (empty for scope '*'). */
export function andSql(fragment: SqlFragment | null): { sql: string; bindings: Knex.RawBinding[] } {
  return fragment ? { sql: `AND ${fragment.sql}`, bindings: fragment.bindings } : { sql: '', bindings: [] };
}

export function whereFragment(q: Knex.QueryBuilder, fragment: SqlFragment | null): Knex.QueryBuilder {
  return fragment ? q.andWhereRaw(fragment.sql, fragment.bindings) : q;
}
