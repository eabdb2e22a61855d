/**
 * Middleware push (spec 4.3 rules 16 and 17): a request's records validated one by one
 * (push-records.ts), their business units checked in one query, and the good ones upserted
 * together into the ledger; one result per record, in request order.
 */
import { businessUnitIdsOf, currencyMinorUnits, getOrganizationProfile, type Db } from '@rp/platform';
import { ConcurrentLedgerWriteError, writeDocumentsRecordingEvents, writePartnersRecordingEvents } from './ledger-events.js';
import { PUSH_ORIGIN, type PushOutcome } from './push-fields.js';
import { validateCustomer, validateInvoice } from './push-records.js';

export { decimalOf, errorCodesMarkdown, isCalendarDate, MAX_PUSH_RECORDS, PUSH_ORIGIN, type PushOutcome } from './push-fields.js';
export { customerRecordSchema, invoiceRecordSchema, MAX_BANK_ACCOUNTS, MAX_DISCOUNT_TERMS, validateCustomer, validateInvoice, type ValidInvoice } from './push-records.js';

/** Mark records whose business unit is not one of the organization's (`known`). */
export function rejectUnknownBusinessUnits<R extends { business_unit_id: string | null }>(outcomes: PushOutcome<R>[], known: ReadonlySet<string>): PushOutcome<R>[] {
  return outcomes.map((o) =>
    o.ok && o.row.business_unit_id !== null && !known.has(o.row.business_unit_id)
      ? { ok: false, remoteId: o.remoteId, errorCode: 'invalid_business_unit', message: 'business_unit_id is not a business unit of the organization' }
      : o,
  );
}

const BASE_CURRENCY_TTL_MS = 60_000;
const baseCurrencyCache = new Map<string, { minorUnits: number; at: number }>();

/** Decimal places of the organization's base currency (the currency of local amounts), cached briefly. */
async function localMinorUnits(db: Db, organizationId: string): Promise<number> {
  const cached = baseCurrencyCache.get(organizationId);
  if (cached && Date.now() - cached.at < BASE_CURRENCY_TTL_MS) return cached.minorUnits;
  const profile = await getOrganizationProfile(db, organizationId);
  const minorUnits = profile ? currencyMinorUnits(profile.base_currency) : 2;
  if (baseCurrencyCache.size > 10_000) baseCurrencyCache.clear();
  baseCurrencyCache.set(organizationId, { minorUnits, at: Date.now() });
  return minorUnits;
}

/** Per-record business-unit check: one query for the whole request, only when a record names a unit. */
async function checkBusinessUnits<R extends { business_unit_id: string | null }>(db: Db, organizationId: string, outcomes: PushOutcome<R>[]): Promise<PushOutcome<R>[]> {
  const named = outcomes.flatMap((o) => (o.ok && o.row.business_unit_id !== null ? [o.row.business_unit_id] : []));
  if (named.length === 0) return outcomes;
  return rejectUnknownBusinessUnits(outcomes, await businessUnitIdsOf(db, organizationId, named));
}

/**
 * Run a write again when Postgres picked it as a deadlock victim (40P01) or could not serialize it
 * (40001, also ConcurrentLedgerWriteError): a customer push linking documents and an invoice push
 * upserting the same documents lock them in different orders. The write is one transaction of
 * idempotent upserts and their events, so a retry is safe.
 */
async function withDeadlockRetry<T>(write: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const code = err instanceof ConcurrentLedgerWriteError ? err.code : (err as { code?: string }).code;
      if (attempt >= attempts || (code !== '40P01' && code !== '40001')) throw err;
    }
  }
}

export interface PushRecordResult {
  remote_id: string | null;
  success: boolean;
  service_id: string | null;
  error_code: string | null;
  message: string | null;
}

/** One result per record, in request order; the stored rows' ids are handed out to the good records in order. */
function results<R>(outcomes: PushOutcome<R>[], ids: string[]): PushRecordResult[] {
  let next = 0;
  return outcomes.map((o) =>
    o.ok
      ? { remote_id: o.remoteId, success: true, service_id: ids[next++]!, error_code: null, message: null }
      : { remote_id: o.remoteId, success: false, service_id: null, error_code: o.errorCode, message: o.message },
  );
}

function validRows<R>(outcomes: PushOutcome<R>[]): R[] {
  return outcomes.flatMap((o) => (o.ok ? [o.row] : []));
}

/** Push invoice and credit-memo records (rule 16): the good ones stored in one statement, with their events, in one transaction. */
export async function pushInvoices(deps: { db: Db }, organizationId: string, records: unknown[]): Promise<PushRecordResult[]> {
  const minor = await localMinorUnits(deps.db, organizationId);
  const outcomes = await checkBusinessUnits(deps.db, organizationId, records.map((r) => validateInvoice(r, minor)));
  const rows = validRows(outcomes);
  const ids = rows.length ? await withDeadlockRetry(() => deps.db.transaction((trx) => writeDocumentsRecordingEvents(trx, organizationId, PUSH_ORIGIN, rows))) : [];
  return results(outcomes, ids);
}

/** Push customer records (rule 17): the good ones stored in one statement, with their events, in one transaction. */
export async function pushCustomers(deps: { db: Db }, organizationId: string, records: unknown[]): Promise<PushRecordResult[]> {
  const outcomes = await checkBusinessUnits(deps.db, organizationId, records.map((r) => validateCustomer(r)));
  const rows = validRows(outcomes);
  const ids = rows.length ? await withDeadlockRetry(() => deps.db.transaction((trx) => writePartnersRecordingEvents(trx, organizationId, PUSH_ORIGIN, rows))) : [];
  return results(outcomes, ids);
}
