/**
 * What a read message does (the inbox's actor):
 *
 * - A promise to pay (category `promise_to_pay`) becomes a promise-to-pay record (status open,
 *   `source` = the message) through the collections domain when the customer is matched with
 *   confidence, the promise was read with confidence ≥ ACT_CONFIDENCE, it has a date, and every
 *   invoice it names is an open invoice of that customer; the amount is the one read, else the
 *   invoices' open total. Otherwise — or when the collections rules refuse it (an invoice under an
 *   open promise already, a date too far ahead, an amount above the open total) — a suggestion on
 *   the message says what was read and why it was not recorded.
 * - A dispute (category `dispute`) opens one dispute per named invoice of the customer (open or
 *   closed) with the reason code read, on the same conditions; else a suggestion.
 * - A bounce records each failed recipient in email_bounces (with the customer whose email it is),
 *   and the collections engine skips email steps to it (`email_bouncing`).
 * - An auto-reply, a question, a remittance or other: nothing here (remittances are cash-app's).
 *
 * Idempotent: a retried call finds the promise or disputes it made by source_inbox_message_id
 * (looked up under the same lock that records them) and the bounce rows by address.
 */
import type { Client } from '@temporalio/client';
import {
  AppError,
  findInvoicesByNumbers,
  findOpenInvoicesByTokens,
  findPartnersByEmail,
  getPartner,
  Money,
  partnerEmailAddresses,
  ValidationError,
  type Db,
  type Identity,
  type LedgerDocument,
} from '@rp/platform';
import type { InboxRef, InboxSuggestion, MessageReading } from '../../domain-types/inbox.js';
import { createDispute } from '../collections/disputes.js';
import { createPromise } from '../collections/promises.js';
import { upsertBounce } from '../../store/inbox/bounces.js';

/** The least promise or dispute confidence (0..100) the inbox acts on by itself. */
export const ACT_CONFIDENCE = 70;
const NOTE_MAX = 2000;

export interface ActDeps {
  db: Db;
  temporal: Client;
}

export interface ActInput {
  organizationId: string;
  message: { id: string; partner_id: string | null; from_address: string | null };
  reading: MessageReading;
  /** the match to `message.partner_id` reached the organization's auto-assign threshold */
  partnerConfident: boolean;
}

export interface ActResult {
  results: InboxRef[];
  suggestions: InboxSuggestion[];
}

/** The inbox acting for the organization: every business unit, no user (created_by stays null; `source` names the message). */
function inboxIdentity(org: string): Identity {
  return { org, sub: null, role: 'admin', kind: 'api_key', cred: 'inbox', bu: '*', perms: [], iat: 0 };
}

function note(excerpt: string): string {
  return `Read from the customer's email: "${excerpt}"`.slice(0, NOTE_MAX);
}

/** Why the collections rules refused, in one sentence. */
function refusal(err: unknown): string | null {
  if (err instanceof ValidationError) return err.errors.map((e) => `${e.loc.filter((l) => l !== 'body').join('.')} ${e.msg}`).join('; ');
  if (err instanceof AppError && err.status === 409) return err.detail ?? err.title;
  return null;
}

/** The named invoices among the customer's documents, or the names that are not. */
function resolve(numbers: string[], docs: LedgerDocument[], partnerId: string): { found: LedgerDocument[]; missing: string[] } {
  const found: LedgerDocument[] = [];
  const missing: string[] = [];
  for (const n of numbers) {
    const key = n.toLowerCase();
    const doc = docs.find((d) => d.partner_id === partnerId && (d.document_number.toLowerCase() === key || d.reference?.toLowerCase() === key));
    if (!doc) missing.push(n);
    else if (!found.includes(doc)) found.push(doc);
  }
  return { found, missing };
}

const variants = (numbers: string[]) => [...new Set(numbers.flatMap((n) => [n, n.toUpperCase(), n.toLowerCase()]))];

/** Why the reading cannot be acted on as it is, or null when it can. */
function precondition(input: ActInput, confidence: number, invoiceCount: number): string | null {
  if (!input.message.partner_id) return 'The message is not matched to a customer.';
  if (!input.partnerConfident) return 'The customer is not matched with enough confidence to act on the message.';
  if (confidence < ACT_CONFIDENCE) return `Read with confidence ${confidence}, below ${ACT_CONFIDENCE}.`;
  if (invoiceCount === 0) return 'No invoice number was read.';
  return null;
}

async function actOnPromise(deps: ActDeps, input: ActInput): Promise<ActResult> {
  const p = input.reading.promise!;
  const { excerpt, ...read } = p;
  const suggest = (reason: string): ActResult => ({ results: [], suggestions: [{ type: 'promise_to_pay', reason, ...read, excerpt }] });
  const blocked = precondition(input, p.confidence, p.invoice_numbers.length) ?? (p.promised_date ? null : 'No payment date was read.');
  if (blocked) return suggest(blocked);
  const partnerId = input.message.partner_id!;
  const docs = await findOpenInvoicesByTokens(deps.db, input.organizationId, variants(p.invoice_numbers));
  const { found, missing } = resolve(p.invoice_numbers, docs, partnerId);
  if (missing.length) return suggest(`Invoice ${missing.join(', ')} is not an open invoice of the customer.`);
  const currencies = new Set(found.map((d) => d.currency.trim()));
  if (p.currency && !currencies.has(p.currency)) return suggest(`The amount read is in ${p.currency}; the invoices are in ${[...currencies].join(', ')}.`);
  const openTotal = found.reduce((s, d) => s.plus(d.amount_open), new Money(0));
  const amount = p.amount ?? openTotal.toFixed();
  try {
    const row = await createPromise(deps, inboxIdentity(input.organizationId), {
      partner_id: partnerId,
      invoice_ids: found.map((d) => d.id),
      amount,
      promised_date: p.promised_date!,
      note: note(excerpt),
      source_inbox_message_id: input.message.id,
    });
    return { results: [{ object: 'promise_to_pay', id: row.id }], suggestions: [] };
  } catch (err) {
    const why = refusal(err);
    if (why === null) throw err;
    return suggest(`Not recorded: ${why}`);
  }
}

async function actOnDispute(deps: ActDeps, input: ActInput): Promise<ActResult> {
  const d = input.reading.dispute!;
  const { excerpt, ...read } = d;
  const suggestion = (reason: string): InboxSuggestion => ({ type: 'dispute', reason, ...read, excerpt });
  const blocked = precondition(input, d.confidence, d.invoice_numbers.length);
  if (blocked) return { results: [], suggestions: [suggestion(blocked)] };
  const partnerId = input.message.partner_id!;
  const docs = await findInvoicesByNumbers(deps.db, input.organizationId, variants(d.invoice_numbers));
  const { found, missing } = resolve(d.invoice_numbers, docs, partnerId);
  if (missing.length) return { results: [], suggestions: [suggestion(`Invoice ${missing.join(', ')} is not an invoice of the customer.`)] };
  const out: ActResult = { results: [], suggestions: [] };
  for (const doc of found) {
    // the amount read names the contested part of a single invoice only
    const amount = found.length === 1 && d.amount && new Money(d.amount).lte(new Money(doc.amount_in_document_currency).abs()) ? d.amount : null;
    try {
      const row = await createDispute(deps, inboxIdentity(input.organizationId), {
        invoice_id: doc.id,
        reason_code: d.reason_code,
        amount,
        note: note(excerpt),
        source_inbox_message_id: input.message.id,
      });
      out.results.push({ object: 'dispute', id: row.id });
    } catch (err) {
      const why = refusal(err);
      if (why === null) throw err;
      out.suggestions.push(suggestion(`Not recorded for invoice ${doc.document_number}: ${why}`));
    }
  }
  return out;
}

/** Records each failed recipient of a bounce, with the customer whose email it is (the matched one first). */
async function recordBounces(deps: ActDeps, input: ActInput): Promise<void> {
  const failed = (input.reading.bounce?.recipients ?? []).filter((r) => r.action === 'failed');
  const matched = input.message.partner_id ? await getPartner(deps.db, input.organizationId, input.message.partner_id) : null;
  for (const r of failed) {
    const address = r.address.toLowerCase();
    let partnerId: string | null = null;
    if (matched && partnerEmailAddresses(matched.email).includes(address)) partnerId = matched.id;
    else {
      const owners = await findPartnersByEmail(deps.db, input.organizationId, address);
      partnerId = owners.length === 1 ? owners[0]!.id : null;
    }
    await upsertBounce(deps.db, {
      organization_id: input.organizationId,
      address,
      partner_id: partnerId,
      inbox_message_id: input.message.id,
      status_code: r.status,
      diagnostic: r.diagnostic?.slice(0, 1000) ?? null,
    });
  }
}

export async function actOnReading(deps: ActDeps, input: ActInput): Promise<ActResult> {
  const { reading } = input;
  switch (reading.category) {
    case 'bounce':
      await recordBounces(deps, input);
      return { results: [], suggestions: [] };
    case 'promise_to_pay':
      return reading.promise ? actOnPromise(deps, input) : { results: [], suggestions: [] };
    case 'dispute':
      return reading.dispute ? actOnDispute(deps, input) : { results: [], suggestions: [] };
    case 'auto_reply':
      return { results: [], suggestions: [] };
    default: {
      // a promise or dispute read beside another category is only suggested
      const suggestions: InboxSuggestion[] = [];
      if (reading.promise) {
        const { excerpt, ...read } = reading.promise;
        suggestions.push({ type: 'promise_to_pay', reason: `The message reads as ${reading.category}, not mainly as a promise to pay.`, ...read, excerpt });
      }
      if (reading.dispute) {
        const { excerpt, ...read } = reading.dispute;
        suggestions.push({ type: 'dispute', reason: `The message reads as ${reading.category}, not mainly as a dispute.`, ...read, excerpt });
      }
      return { results: [], suggestions };
    }
  }
}
