/**
 * Recording a remittance advice (JSON or CSV): linking its lines to the ledger's invoices within the
 * caller's business units, assessing it, storing it, and reading remittances back as records the
 * view shapes.
 */
import type { Knex } from 'knex';
import {
  findInvoicesByNumbers,
  findPartnersByName,
  getDocuments,
  getOrganizationProfile,
  getPartners,
  downloadUrl,
  NotFoundError,
  recordEvent,
  uploadPolicy,
  ValidationError,
  type BusinessUnitScope,
  type Db,
  type LedgerDocument,
  type LedgerPartner,
  type ObjectStorage,
  type PageRequest,
  type PresignedUrl,
} from '@rp/platform';
import type { CashAppDeps } from '../deps.js';
import {
  allocationsOf,
  getRemittance,
  insertRemittance,
  listRemittances,
  type BankDetails,
  type RemittanceAllocationRow,
  type RemittanceFilter,
  type RemittanceRow,
} from '../store/remittances.js';
import { assessRemittance, parseRemittanceCsv, partnerByPayerName, type InvoiceCandidate, type RemittanceLine } from './remittances.js';
import { businessUnitOf } from './events.js';
import { remittanceView } from '../views/remittances.js';

/** Most lines one advice may have (JSON allocations or CSV lines). */
export const MAX_REMITTANCE_LINES = 1000;

/** A remittance with what its answer shows: its allocations, their invoices and its customer. */
export interface RemittanceRecord {
  row: RemittanceRow;
  allocations: RemittanceAllocationRow[];
  invoices: Map<string, LedgerDocument>;
  partners: Map<string, LedgerPartner>;
  /** a fresh presigned GET of the attachment kept in object storage (advice read from email); null when none or no storage */
  link?: PresignedUrl | null;
}

/** What reading remittances needs: the database, and object storage to link attachments kept there. */
type ReadDeps = Pick<CashAppDeps, 'db'> & { storage?: ObjectStorage | null };

/** The advice's own fields (the JSON body, or the CSV route's query parameters); amounts exact decimal strings. */
export interface RemittanceHeader {
  payer_name?: string | null;
  payer_email?: string | null;
  transaction_number?: string | null;
  transaction_date?: string | null;
  currency?: string | null;
  payment_method?: string | null;
  transaction_amount: string | null;
  payer_bank_details?: Partial<BankDetails> | null;
  payee_bank_details?: Partial<BankDetails> | null;
}

function bankDetails(d: Partial<BankDetails> | null | undefined): BankDetails | null {
  if (!d) return null;
  return {
    account_number: d.account_number ?? null,
    bank_name: d.bank_name ?? null,
    bank_number: d.bank_number ?? null,
    branch_number: d.branch_number ?? null,
    iban: d.iban ?? null,
    type: d.type ?? null,
  };
}

async function insertAssessed(
  db: Db,
  org: string,
  scope: BusinessUnitScope,
  header: RemittanceHeader,
  lines: RemittanceLine[],
  source: 'json' | 'csv',
  attachment?: { file_name: string | null; content_type: string; content: Buffer },
): Promise<string> {
  // a member links only invoices and customers of their business units: others are as if unknown
  const found = await findInvoicesByNumbers(db, org, lines.map((l) => l.invoice_number), scope);
  const byNumber = new Map<string, InvoiceCandidate[]>();
  for (const d of found) byNumber.set(d.document_number, [...(byNumber.get(d.document_number) ?? []), d]);
  let currency = header.currency ?? null;
  if (!currency) {
    const currencies = new Set(found.map((d) => d.currency));
    currency = currencies.size === 1 ? [...currencies][0] : ((await getOrganizationProfile(db, org))?.base_currency ?? null);
  }
  const payerPartners = header.payer_name ? await findPartnersByName(db, org, header.payer_name, scope) : [];
  const payerPartnerId = partnerByPayerName(payerPartners, header.payer_name ?? null);
  const partnerNames = new Map<string, string>();
  const partnerIds = [...new Set(found.map((d) => d.partner_id).filter((p): p is string => Boolean(p)))];
  for (const p of (await getPartners(db, org, partnerIds)).values()) partnerNames.set(p.id, p.name);
  for (const p of payerPartners) partnerNames.set(p.id, p.name);

  const assessment = assessRemittance({ lines, invoicesByNumber: byNumber, currency, transactionAmount: header.transaction_amount, payerPartnerId, partnerNames });
  return insertRemittance(
    db,
    org,
    {
      partner_id: assessment.partnerId,
      source,
      currency,
      transaction_amount: header.transaction_amount,
      transaction_date: header.transaction_date ?? null,
      transaction_number: header.transaction_number ?? null,
      payment_method: header.payment_method ?? null,
      payer_name: header.payer_name ?? null,
      payer_email: header.payer_email ?? null,
      payer_bank_details: bankDetails(header.payer_bank_details),
      payee_bank_details: bankDetails(header.payee_bank_details),
      agent_confidence_score: assessment.score,
      agent_confidence_reason: assessment.reason,
      agent_error_code: assessment.errorCode,
      agent_uncertainties: assessment.uncertainties,
      attachment,
    },
    lines.map((l, i) => ({ ...l, invoice_id: assessment.invoiceIds[i] })),
    (trx, id) => recordRemittanceCreated(trx, org, id),
  );
}

/**
 * remittance.created, in the insert's transaction: the remittance as GET answers it, tied to the
 * business unit of its customer and linked invoices (see domain/events.ts).
 */
export async function recordRemittanceCreated(trx: Knex.Transaction, org: string, id: string): Promise<void> {
  const row = await getRemittance(trx, org, id);
  if (!row) return;
  const [record] = await recordsOf(trx, org, [row]);
  const units = [record.row.partner_id ? record.partners.get(record.row.partner_id)?.business_unit_id : null, ...record.allocations.map((a) => (a.invoice_id ? record.invoices.get(a.invoice_id)?.business_unit_id : null))];
  await recordEvent(trx, { organizationId: org, type: 'remittance.created', resourceId: id, object: remittanceView(record), businessUnitId: businessUnitOf(units) });
}

async function recordsOf(db: Db, org: string, rows: RemittanceRow[], storage: ObjectStorage | null = null): Promise<RemittanceRecord[]> {
  const allocations = await allocationsOf(db, org, rows.map((r) => r.id));
  const [invoices, partners] = await Promise.all([
    getDocuments(db, org, allocations.map((a) => a.invoice_id).filter((id): id is string => Boolean(id))),
    getPartners(db, org, rows.map((r) => r.partner_id).filter((id): id is string => Boolean(id))),
  ]);
  const byRemittance = new Map<string, RemittanceAllocationRow[]>();
  for (const a of allocations) byRemittance.set(a.remittance_id, [...(byRemittance.get(a.remittance_id) ?? []), a]);
  const links = await Promise.all(
    rows.map(async (row) => (row.attachment_object_key ? downloadUrl(storage, uploadPolicy(), { key: row.attachment_object_key, name: row.attachment_file_name ?? undefined }) : null)),
  );
  return rows.map((row, i) => ({ row, allocations: byRemittance.get(row.id) ?? [], invoices, partners, link: links[i] }));
}

/** The remittance within the caller's business units, or 404. */
export async function remittanceRecord(deps: ReadDeps, org: string, id: string, scope: BusinessUnitScope = '*'): Promise<RemittanceRecord> {
  const row = await getRemittance(deps.db, org, id, scope);
  if (!row) throw new NotFoundError(`No remittance ${id}.`);
  return (await recordsOf(deps.db, org, [row], deps.storage ?? null))[0];
}

/** A page of the organization's remittances (newest first) and how many match the filter. */
export async function remittancePage(deps: ReadDeps, org: string, filter: RemittanceFilter, page: Pick<PageRequest, 'offset' | 'pageSize'>) {
  const { rows, total } = await listRemittances(deps.db, org, filter, page.offset, page.pageSize);
  return { records: await recordsOf(deps.db, org, rows, deps.storage ?? null), total };
}

/** Records an advice given as JSON lines and answers it as stored. */
export async function createRemittance(deps: Pick<CashAppDeps, 'db'>, org: string, scope: BusinessUnitScope, header: RemittanceHeader, lines: RemittanceLine[]): Promise<RemittanceRecord> {
  const id = await insertAssessed(deps.db, org, scope, header, lines, 'json');
  return remittanceRecord(deps, org, id, scope);
}

/**
 * Records a CSV advice: a malformed file is a 422 naming each line and column and stores nothing;
 * the file is kept as the remittance's attachment.
 */
export async function createRemittanceFromCsv(
  deps: Pick<CashAppDeps, 'db'>,
  org: string,
  scope: BusinessUnitScope,
  header: RemittanceHeader,
  csv: { text: string; fileName: string | null },
): Promise<RemittanceRecord> {
  const { lines, problems } = parseRemittanceCsv(csv.text);
  if (lines.length > MAX_REMITTANCE_LINES) problems.push({ line: MAX_REMITTANCE_LINES + 2, field: 'csv', msg: `At most ${MAX_REMITTANCE_LINES} lines per advice.` });
  if (problems.length) {
    throw new ValidationError(
      problems.map((p) => ({ loc: ['body', `line ${p.line}`, p.field], msg: p.msg, type: 'csv_invalid' })),
      'The CSV remittance advice is not valid; see detail for each line.',
    );
  }
  const id = await insertAssessed(deps.db, org, scope, header, lines, 'csv', {
    file_name: csv.fileName,
    content_type: 'text/csv',
    content: Buffer.from(csv.text, 'utf8'),
  });
  return remittanceRecord(deps, org, id, scope);
}
