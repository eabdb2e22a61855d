/**
 * Ledger partners (customers) as other services read them: by id, for payer matching, with their
 * payment habits and open invoices; and the organization's profile (name, base currency, timezone).
 */
import type { Knex } from 'knex';
import { type BusinessUnitScope, whereInScope } from './scope.js';
import { DOCUMENT_COLUMNS, LEDGER_TABLES, ORGANIZATIONS_TABLE, PARTNER_COLUMNS, type LedgerDocument, type LedgerPartner } from './tables.js';

export async function getPartner(db: Knex, organizationId: string, id: string, scope: BusinessUnitScope = '*'): Promise<LedgerPartner | null> {
  const row = await whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId, id }), scope).first();
  return (row as LedgerPartner | undefined) ?? null;
}

export async function getPartners(db: Knex, organizationId: string, ids: readonly string[], scope: BusinessUnitScope = '*'): Promise<Map<string, LedgerPartner>> {
  if (ids.length === 0) return new Map();
  const rows = (await whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId }).whereIn('id', [...new Set(ids)]), scope)) as LedgerPartner[];
  return new Map(rows.map((r) => [r.id, r]));
}

/** Every partner of the organization with the fields payer identification needs. */
export async function listPartnersForMatching(db: Knex, organizationId: string): Promise<Pick<LedgerPartner, 'id' | 'name' | 'legal_name' | 'account_number' | 'remote_id'>[]> {
  return db(LEDGER_TABLES.partners).select('id', 'name', 'legal_name', 'account_number', 'remote_id').where({ organization_id: organizationId }).orderBy('id');
}

/**
 * How each partner of the organization pays, from its cleared invoices that have a due date: how many
 * and the average days between due date and clearing (negative: paid early). Partners without such
 * invoices are absent. Ordered by partner id.
 */
export async function partnerPaymentHabits(
  db: Knex,
  organizationId: string,
): Promise<{ partner_id: string; paid_invoices: number; average_days_after_due: number; first_cleared: string; last_cleared: string }[]> {
  const rows = (await db(LEDGER_TABLES.documents)
    .select('partner_id')
    .count({ paid_invoices: '*' })
    .avg({ average_days_after_due: db.raw('clearing_date - net_due_date') })
    .select(db.raw("to_char(min(clearing_date), 'YYYY-MM-DD') AS first_cleared"), db.raw("to_char(max(clearing_date), 'YYYY-MM-DD') AS last_cleared"))
    .where({ organization_id: organizationId, kind: 'invoice' })
    .whereNotNull('partner_id')
    .whereNotNull('clearing_date')
    .whereNotNull('net_due_date')
    .groupBy('partner_id')
    .orderBy('partner_id')) as { partner_id: string; paid_invoices: string; average_days_after_due: string; first_cleared: string; last_cleared: string }[];
  return rows.map((r) => ({
    partner_id: r.partner_id,
    paid_invoices: Number(r.paid_invoices),
    average_days_after_due: Number(r.average_days_after_due),
    first_cleared: r.first_cleared,
    last_cleared: r.last_cleared,
  }));
}

/** Partners whose name or legal name equals `name`, ignoring case (payer identification on remittances). */
export async function findPartnersByName(db: Knex, organizationId: string, name: string, scope: BusinessUnitScope = '*'): Promise<LedgerPartner[]> {
  const wanted = name.trim().toLowerCase();
  if (!wanted) return [];
  return whereInScope(
    db(LEDGER_TABLES.partners)
      .select(PARTNER_COLUMNS)
      .where({ organization_id: organizationId })
      .andWhere((q) => {
        void q.whereRaw('lower(name) = ?', [wanted]).orWhereRaw('lower(legal_name) = ?', [wanted]);
      }),
    scope,
  ).orderBy('id') as Promise<LedgerPartner[]>;
}

/** A partner's open invoices, oldest due first. */
export async function openInvoicesOfPartner(db: Knex, organizationId: string, partnerId: string): Promise<LedgerDocument[]> {
  return db(LEDGER_TABLES.documents)
    .select(DOCUMENT_COLUMNS)
    .where({ organization_id: organizationId, partner_id: partnerId, kind: 'invoice', status_open: true })
    .orderBy([{ column: 'net_due_date', order: 'asc' }, { column: 'id' }]) as Promise<LedgerDocument[]>;
}

/**
 * A partner (within `scope`) and its open invoices (as openInvoicesOfPartner orders them) in ONE
 * query: one row per open invoice, at least one row. Null when the partner is unknown or out of scope.
 */
export async function partnerWithOpenInvoices(
  db: Knex,
  organizationId: string,
  partnerId: string,
  scope: BusinessUnitScope = '*',
): Promise<{ partner: LedgerPartner; invoices: LedgerDocument[] } | null> {
  const partner = whereInScope(db(LEDGER_TABLES.partners).select(PARTNER_COLUMNS).where({ organization_id: organizationId, id: partnerId }), scope).as('p');
  const rows = (await db
    .from(partner)
    .leftJoin(`${LEDGER_TABLES.documents} as d`, (j) => {
      void j.on('d.organization_id', 'p.organization_id').andOn('d.partner_id', 'p.id').andOnVal('d.kind', 'invoice').andOnVal('d.status_open', true);
    })
    .select([...PARTNER_COLUMNS.map((c) => `p.${c} as p_${c}`), ...DOCUMENT_COLUMNS.map((c) => `d.${c} as d_${c}`)])
    .orderBy([{ column: 'd.net_due_date', order: 'asc' }, { column: 'd.id' }])) as Record<string, unknown>[];
  const first = rows[0];
  if (!first) return null;
  const pick = <T>(row: Record<string, unknown>, prefix: string, columns: string[]) => Object.fromEntries(columns.map((c) => [c, row[prefix + c]])) as T;
  return {
    partner: pick<LedgerPartner>(first, 'p_', PARTNER_COLUMNS),
    invoices: rows.filter((r) => r.d_id !== null).map((r) => pick<LedgerDocument>(r, 'd_', DOCUMENT_COLUMNS)),
  };
}

export interface OrganizationProfile {
  id: string;
  name: string;
  base_currency: string;
  timezone: string;
}

/** The organization's name, base currency and timezone (owned by admin; read-only here). */
export async function getOrganizationProfile(db: Knex, organizationId: string): Promise<OrganizationProfile | null> {
  const row = await db(ORGANIZATIONS_TABLE).select('id', 'name', 'base_currency', 'timezone').where({ id: organizationId }).first();
  return (row as OrganizationProfile | undefined) ?? null;
}

/**
 * The bank accounts the customer master data gives (the customer push's `bank_accounts`): each
 * account's identifier (IBAN, or account number; letters and digits, upper case) and its partner,
 * for payer identification alongside the accounts cash application learns from approved payments.
 */
export async function listMasterDataBankAccounts(db: Knex, organizationId: string): Promise<{ account_identifier: string; partner_id: string; bank_code: string | null }[]> {
  return db(LEDGER_TABLES.masterBankAccounts)
    .select('account_identifier', 'partner_id', 'bank_code')
    .where({ organization_id: organizationId })
    .orderBy(['partner_id', 'account_identifier']);
}

/**
 * The organization's automatic-approval threshold (admin's `auto_approve_threshold`, numeric text
 * 0..1), or null when it is off or the organization is unknown. Read-only here.
 */
export async function getAutoApproveThreshold(db: Knex, organizationId: string): Promise<string | null> {
  const row = (await db(ORGANIZATIONS_TABLE).select('auto_approve_threshold').where({ id: organizationId }).first()) as { auto_approve_threshold: string | null } | undefined;
  return row?.auto_approve_threshold ?? null;
}
