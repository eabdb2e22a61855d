/**
 * Ledger lookups of the AR inbox (admin matches a received email to a customer): partners by the
 * sender's email domain, partners by customer number, documents by invoice number (partners by the
 * exact address: partner-emails.ts).
 * Read-only, one organization at a time, bounded inputs.
 */
import type { Knex } from 'knex';
import { LEDGER_TABLES } from './tables.js';

/** Most values one lookup takes (a message quoting more numbers is read by its first ones). */
export const INBOX_LOOKUP_LIMIT = 200;

/** A partner's `email` may list several addresses (`a@x.com; b@y.com`): each of them, lower case (as partner-emails.ts splits them). */
const PARTNER_ADDRESSES_SQL = `regexp_split_to_table(lower(coalesce(email, '')), '[,;[:space:]]+')`;

export interface PartnerBrief {
  id: string;
  name: string;
  business_unit_id: string | null;
  assignee_id: string | null;
}

const BRIEF = ['id', 'name', 'business_unit_id', 'assignee_id'];

/** Partners with an email address at `domain` (case-insensitive; the part after the last `@`). */
export async function partnersByEmailDomain(db: Knex, organizationId: string, domain: string): Promise<PartnerBrief[]> {
  return db(LEDGER_TABLES.partners)
    .select(BRIEF)
    .where({ organization_id: organizationId })
    .whereRaw(`EXISTS (SELECT 1 FROM ${PARTNER_ADDRESSES_SQL} a WHERE split_part(a, '@', 2) = ?)`, [domain.toLowerCase()])
    .orderBy('id')
    .limit(INBOX_LOOKUP_LIMIT) as Promise<PartnerBrief[]>;
}

/** Partners whose customer number (account number or ERP id) is one of `numbers` (case-insensitive). */
export async function partnersByCustomerNumbers(db: Knex, organizationId: string, numbers: readonly string[]): Promise<(PartnerBrief & { account_number: string | null; remote_id: string })[]> {
  const wanted = [...new Set(numbers.map((n) => n.toLowerCase()))].slice(0, INBOX_LOOKUP_LIMIT);
  if (!wanted.length) return [];
  return db(LEDGER_TABLES.partners)
    .select([...BRIEF, 'account_number', 'remote_id'])
    .where({ organization_id: organizationId })
    .andWhere((q) => {
      void q.whereRaw('lower(account_number) = ANY(?::text[])', [wanted]).orWhereRaw('lower(remote_id) = ANY(?::text[])', [wanted]);
    })
    .orderBy('id') as Promise<(PartnerBrief & { account_number: string | null; remote_id: string })[]>;
}

export interface DocumentBrief {
  id: string;
  partner_id: string | null;
  kind: 'invoice' | 'credit_memo';
  document_number: string;
  reference: string | null;
}

/** Invoices whose document number or reference is one of `numbers` (case-insensitive). */
export async function invoicesByNumbers(db: Knex, organizationId: string, numbers: readonly string[]): Promise<DocumentBrief[]> {
  const wanted = [...new Set(numbers.map((n) => n.toLowerCase()))].slice(0, INBOX_LOOKUP_LIMIT);
  if (!wanted.length) return [];
  return db(LEDGER_TABLES.documents)
    .select('id', 'partner_id', 'kind', 'document_number', 'reference')
    .where({ organization_id: organizationId, kind: 'invoice' })
    .andWhere((q) => {
      void q.whereRaw('lower(document_number) = ANY(?::text[])', [wanted]).orWhereRaw('lower(reference) = ANY(?::text[])', [wanted]);
    })
    .orderBy('id')
    .limit(INBOX_LOOKUP_LIMIT) as Promise<DocumentBrief[]>;
}
