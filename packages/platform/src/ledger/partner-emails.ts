/**
 * Ledger partners by email address: the customers whose `email` field names an address (the field
 * may hold several, separated by commas, semicolons or spaces). Case-insensitive.
 */
import type { Knex } from 'knex';
import { LEDGER_TABLES, PARTNER_COLUMNS, type LedgerPartner } from './tables.js';

/** The addresses a partner's `email` field holds, lower case. */
export function partnerEmailAddresses(email: string | null | undefined): string[] {
  return (email ?? '')
    .split(/[,;\s]+/)
    .map((a) => a.trim().replace(/^<|>$/g, '').toLowerCase())
    .filter((a) => a.includes('@'));
}

/** Partners of the organization whose email field names `address`. */
export async function findPartnersByEmail(db: Knex, organizationId: string, address: string): Promise<LedgerPartner[]> {
  const wanted = address.trim().toLowerCase();
  if (!wanted.includes('@')) return [];
  const like = `%${wanted.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = (await db(LEDGER_TABLES.partners)
    .select(PARTNER_COLUMNS)
    .where({ organization_id: organizationId })
    .andWhereRaw('lower(email) LIKE ?', [like])
    .orderBy('id')
    .limit(50)) as LedgerPartner[];
  return rows.filter((p) => partnerEmailAddresses(p.email).includes(wanted));
}
