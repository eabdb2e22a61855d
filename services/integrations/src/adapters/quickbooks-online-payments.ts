/**
 * QuickBooks Online Payment posting (Intuit Accounting API v3, Payment entity).
 *
 *   create: POST {apiBaseUrl}/v3/company/{realmId}/payment?requestid=<key>&minorversion=75
 *           {CustomerRef: {value}, TotalAmt, TxnDate, CurrencyRef: {value}, PaymentRefNum, PrivateNote,
 *            Line: [{Amount, LinkedTxn: [{TxnId: <Invoice Id>, TxnType: "Invoice"}]},
 *                   {Amount, LinkedTxn: [{TxnId: <CreditMemo Id>, TxnType: "CreditMemo"}]}]}
 *           → {Payment: {Id, SyncToken, TotalAmt, UnappliedAmt, …}, time}
 *   read:   GET  {apiBaseUrl}/v3/company/{realmId}/payment/{Id}?minorversion=75 → {Payment: {…}}
 *   find:   GET  {apiBaseUrl}/v3/company/{realmId}/query?query=select * from Payment where PaymentRefNum = '<ref>'
 *           → {QueryResponse: {Payment: [...]}} (`{QueryResponse: {}}` when none; deleted Payments are not returned)
 *   delete: POST {apiBaseUrl}/v3/company/{realmId}/payment?operation=delete&requestid=<key>
 *           {Id, SyncToken} → {Payment: {Id, status: "Deleted"}, time}
 *
 * `requestid` makes a create idempotent: QuickBooks answers a repeated request id with the response
 * of the first request instead of creating a second Payment (Intuit: "Request ID update for
 * QuickBooks Online integration"), so a retry after a lost answer or a failed result write is safe.
 * QuickBooks remembers request ids for a limited time only and a new posting attempt has a new one,
 * so the Payment also carries the payment's posting key in PaymentRefNum (documented max 21
 * characters, filterable in the query language; PrivateNote, max 4000, is not), and a posting first
 * finds the Payment by that key.
 * A credit memo applied by the payment is a Line linked with TxnType "CreditMemo" whose Amount is
 * the credit applied: TotalAmt (the deposit) = Σ invoice lines − Σ credit memo lines + UnappliedAmt.
 * TotalAmt above the lines' sum leaves the rest unapplied on the customer (UnappliedAmt): that is how
 * a deposit, or the unallocated remainder of one, is posted on account. Errors have the documented
 * `{Fault: {Error: [{Message, Detail, code}], type}}` shape: a ValidationFault (400) is a refusal
 * (`rejected`, not retried), 401/403 `authentication_required`, 429 and 5xx are retried.
 * Amounts are written into the JSON as the exact decimal text, never through a float.
 */
import { Money } from '@rp/platform';
import { qboFetch, QBO_MINOR_VERSION } from './quickbooks-online-http.js';
import { ProviderApiError, type ProviderAccess } from './adapter.js';

export interface QboPaymentLine {
  /** QuickBooks Invoice Id, or CreditMemo Id (txnType CreditMemo) */
  invoiceId: string;
  /** default Invoice */
  txnType?: 'Invoice' | 'CreditMemo';
  /** decimal string */
  amount: string;
}

export interface QboPaymentCreate {
  customerId: string;
  currency: string;
  /** decimal string: the whole deposit */
  totalAmount: string;
  txnDate: string | null;
  reference: string | null;
  privateNote: string | null;
  lines: QboPaymentLine[];
}

export interface QboPayment {
  Id: string;
  SyncToken: string;
  TotalAmt?: string;
  UnappliedAmt?: string;
  PaymentRefNum?: string;
}

interface QboFault {
  Fault?: { type?: string; Error?: { Message?: string; Detail?: string; code?: string }[] };
}

function faultText(body: unknown, fallback: string): string {
  const fault = (body as QboFault | null)?.Fault;
  const first = fault?.Error?.[0];
  if (!first) return fallback;
  return [fault?.type, first.code && `code ${first.code}`, first.Message, first.Detail].filter(Boolean).join(': ');
}

function faultCode(body: unknown): string | null {
  return (body as QboFault | null)?.Fault?.Error?.[0]?.code ?? null;
}

/** Object Not Found (a deleted or unknown entity). */
const NOT_FOUND_CODE = '610';

class QboNotFound extends Error {}

const NUM = '\u0000num:';

/** JSON with the marked decimal strings written as JSON numbers (exact text). */
function jsonWithDecimals(value: unknown): string {
  return JSON.stringify(value).replace(/"\\u0000num:(-?\d+(?:\.\d+)?)"/g, '$1');
}

function decimal(v: string): string {
  return `${NUM}${new Money(v).toFixed()}`;
}

function realmOf(access: ProviderAccess): string {
  if (!access.realmId) throw new ProviderApiError('misconfigured', 'The connection has no QuickBooks company (realmId); authenticate it again.');
  return access.realmId;
}

async function qboCall(access: ProviderAccess, method: 'GET' | 'POST', path: string, params: Record<string, string>, body?: string): Promise<unknown> {
  const url = new URL(`${access.apiBaseUrl.replace(/\/+$/, '')}/v3/company/${encodeURIComponent(realmOf(access))}${path}`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  url.searchParams.set('minorversion', QBO_MINOR_VERSION);
  const res = await qboFetch(access, url, { method, body });
  const text = res.text;
  const parsed = res.json;
  const fault = (parsed as QboFault | null)?.Fault;
  if (res.ok && parsed && typeof parsed === 'object' && !fault) return parsed;
  const message = faultText(parsed, text.slice(0, 200) || res.statusText);
  if (faultCode(parsed) === NOT_FOUND_CODE) throw new QboNotFound(message);
  if (res.status === 401 || res.status === 403 || fault?.type === 'AUTHENTICATION') {
    throw new ProviderApiError('authentication_required', `QuickBooks Online refused the credentials (${res.status}): ${message}. Authenticate the connection again.`, { httpStatus: res.status });
  }
  if (res.status === 429) throw new ProviderApiError('rate_limited', `QuickBooks Online rate limit reached (429): ${message}.`, { httpStatus: 429, retryAfterSeconds: Number(res.headers.get('retry-after')) || null });
  if (res.status >= 500) throw new ProviderApiError('server_error', `QuickBooks Online failed (${res.status}): ${message}.`, { httpStatus: res.status });
  if (res.ok && !fault) throw new ProviderApiError('server_error', `QuickBooks Online answered ${res.status} without a JSON body.`, { httpStatus: res.status });
  throw new ProviderApiError('rejected', `QuickBooks Online refused the payment (${res.status}): ${message}`, { httpStatus: res.status });
}

function paymentOf(body: unknown): QboPayment {
  const p = (body as { Payment?: QboPayment }).Payment;
  if (!p || typeof p.Id !== 'string') throw new ProviderApiError('server_error', 'QuickBooks Online answered without a Payment.');
  return { ...p, SyncToken: String(p.SyncToken ?? '0') };
}

/** The Payment body of a create (exported for tests and logs). */
export function qboPaymentBody(p: QboPaymentCreate): string {
  const body: Record<string, unknown> = {
    CustomerRef: { value: p.customerId },
    CurrencyRef: { value: p.currency },
    TotalAmt: decimal(p.totalAmount),
    Line: p.lines.map((l) => ({ Amount: decimal(l.amount), LinkedTxn: [{ TxnId: l.invoiceId, TxnType: l.txnType ?? 'Invoice' }] })),
  };
  if (p.txnDate) body.TxnDate = p.txnDate;
  // PaymentRefNum holds at most 21 characters in QuickBooks.
  if (p.reference) body.PaymentRefNum = p.reference.slice(0, 21);
  if (p.privateNote) body.PrivateNote = p.privateNote.slice(0, 4000);
  return jsonWithDecimals(body);
}

/** Create the Payment; `requestId` (≤ 50 chars) makes a repeated call return the same Payment. */
export async function createQboPayment(access: ProviderAccess, requestId: string, p: QboPaymentCreate): Promise<QboPayment> {
  return paymentOf(await qboCall(access, 'POST', '/payment', { requestid: requestId }, qboPaymentBody(p)));
}

/** QuickBooks' query language quotes strings in `'`; a quote or backslash inside is escaped with `\`. */
function qboString(v: string): string {
  return `'${v.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

export interface QboPaymentFound extends QboPayment {
  CustomerRef?: { value?: string };
  PaymentRefNum?: string;
  PrivateNote?: string;
}

/** The live Payments whose PaymentRefNum is `ref` (a posting key: none or one). */
export async function findQboPaymentsByRef(access: ProviderAccess, ref: string): Promise<QboPaymentFound[]> {
  const body = (await qboCall(access, 'GET', '/query', { query: `select * from Payment where PaymentRefNum = ${qboString(ref)}` })) as { QueryResponse?: { Payment?: unknown } };
  const rows = body.QueryResponse?.Payment;
  if (rows === undefined) return [];
  if (!Array.isArray(rows)) throw new ProviderApiError('server_error', 'QuickBooks Online answered the Payment query without a list.');
  return rows.map((r) => ({ ...(r as QboPaymentFound), ...paymentOf({ Payment: r }) }));
}

/** The Payment, or null when QuickBooks does not know it (deleted). */
export async function readQboPayment(access: ProviderAccess, id: string): Promise<QboPayment | null> {
  try {
    return paymentOf(await qboCall(access, 'GET', `/payment/${encodeURIComponent(id)}`, {}));
  } catch (err) {
    if (err instanceof QboNotFound) return null;
    throw err;
  }
}

/**
 * Delete the Payment (its current SyncToken is read first, as QuickBooks requires the latest one).
 * Returns false when it was already gone.
 */
export async function deleteQboPayment(access: ProviderAccess, requestId: string, id: string): Promise<boolean> {
  const current = await readQboPayment(access, id);
  if (!current) return false;
  try {
    await qboCall(access, 'POST', '/payment', { operation: 'delete', requestid: requestId }, JSON.stringify({ Id: current.Id, SyncToken: current.SyncToken }));
    return true;
  } catch (err) {
    if (err instanceof QboNotFound) return false;
    throw err;
  }
}
