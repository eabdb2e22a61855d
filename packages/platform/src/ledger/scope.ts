/**
 * Business-unit scope of ledger reads: which partners and documents a caller may see, as query
 * filters and SQL fragments, and the organization's business units (owned by admin; read-only here).
 */
import type { Knex } from 'knex';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { BUSINESS_UNITS_TABLE, LEDGER_TABLES } from './tables.js';

/**
 * The business units a caller may see: '*' (admins, API keys) or a member's units (identity.bu).
 * A ledger record (partner or document) is in scope when it is tied to no unit or to one of them;
 * a record out of scope is treated as if it did not exist (404, absent from lists, 422 as a reference).
 */
export type BusinessUnitScope = '*' | readonly string[];

/** Whether a record of the given business unit (null = not tied to a unit) is within the scope. */
export function inBusinessUnitScope(scope: BusinessUnitScope, businessUnitId: string | null): boolean {
  return scope === '*' || businessUnitId === null || scope.includes(businessUnitId);
}

export function whereInScope(q: Knex.QueryBuilder, scope: BusinessUnitScope, column = 'business_unit_id'): Knex.QueryBuilder {
  if (scope === '*') return q;
  return q.andWhere((w) => {
    void w.whereNull(column).orWhereIn(column, [...scope]);
  });
}

export interface SqlFragment {
  sql: string;
  bindings: Knex.RawBinding[];
}

/**
 * SQL that is true when the ledger partner whose id is `idExpr` (a trusted column expression of the
 * caller's query, e.g. `p.partner_id`) is outside the scope; a null id or an unknown partner is not.
 * Null for scope '*' (nothing is outside).
 */
export function partnerOutOfScopeSql(idExpr: string, scope: BusinessUnitScope): SqlFragment | null {
  if (scope === '*') return null;
  return {
    sql: `EXISTS (SELECT 1 FROM ${LEDGER_TABLES.partners} scope_p WHERE scope_p.id = ${idExpr} AND scope_p.business_unit_id IS NOT NULL AND NOT (scope_p.business_unit_id = ANY(?::uuid[])))`,
    bindings: [[...scope]],
  };
}

/** Like partnerOutOfScopeSql, for the ledger document (invoice, credit memo) whose id is `idExpr`. */
export function documentOutOfScopeSql(idExpr: string, scope: BusinessUnitScope): SqlFragment | null {
  if (scope === '*') return null;
  return {
    sql: `EXISTS (SELECT 1 FROM ${LEDGER_TABLES.documents} scope_d WHERE scope_d.id = ${idExpr} AND scope_d.business_unit_id IS NOT NULL AND NOT (scope_d.business_unit_id = ANY(?::uuid[])))`,
    bindings: [[...scope]],
  };
}

/** Which of `ids` are business units of the organization (owned by admin; read-only here). */
export async function businessUnitIdsOf(db: Knex, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = (await db(BUSINESS_UNITS_TABLE).where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]).pluck('id')) as string[];
  return new Set(found);
}

/**
 * A body's references to business units (`ids` at `loc`): 422 naming each index that is not a unit of
 * the organization, or not one within `scope` (a member's units), exactly as for a random id.
 */
export async function checkBusinessUnitReferences(db: Knex, organizationId: string, scope: BusinessUnitScope, ids: readonly string[], loc: (string | number)[]): Promise<void> {
  const known = await businessUnitIdsOf(db, organizationId, ids);
  const issues: ValidationIssue[] = [];
  ids.forEach((id, i) => {
    if (!known.has(id) || !inBusinessUnitScope(scope, id)) issues.push({ loc: [...loc, i], msg: 'is not a business unit of this organization', type: 'value_error.not_found' });
  });
  if (issues.length) throw new ValidationError(issues);
}

// ---------------------------------------------------------------- predicted overdue (cash-app analytics)

/** Names of the organization's business units (owned by admin; read-only here). */
export async function businessUnitNames(db: Knex, organizationId: string): Promise<Map<string, string>> {
  const rows = (await db(BUSINESS_UNITS_TABLE).select('id', 'name').where({ organization_id: organizationId })) as { id: string; name: string }[];
  return new Map(rows.map((r) => [r.id, r.name]));
}
