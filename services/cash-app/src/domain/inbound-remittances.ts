/**
 * Remittance advice received by email (the AR inbox hands each message over on cash-app's task
 * queue): its parts read (remittance-reading/), one remittance recorded per part that holds
 * advice, linked and assessed like an advice given through the API (the activity then matches the
 * waiting bank lines it explains again).
 *
 * - Idempotent per part: the unique (organization, inbox message, part) finds what an earlier
 *   attempt recorded; `remittance.created` is recorded once, in the insert's transaction.
 * - `source` is `email`; `email` is the message summary; an attachment's file stays in object
 *   storage (`attachment_object_key`), the answer links it with a presigned URL.
 * - Nothing readable: one remittance (part `body`) without allocations whose `agent_error_code`
 *   says why (`no_remittance_lines`, `unsupported_attachment`, `unreadable_attachment`), so a clerk
 *   sees the advice arrived; the result's errorCode carries the same code.
 * - Confidence: the assessment of linking (domain/remittances.ts) times 0.9 when the reader had to
 *   guess which column an amount stood in; the reader's own doubts join the uncertainties
 *   (`total_differs: total <t>, lines <s>`, `line_amounts_unclear: <no>`).
 * - Customer: the one the linked invoices belong to, else the one the payer name names, else the
 *   one the inbox matched the email to (the reason says so).
 */
import {
  currencyMinorUnits,
  findInvoicesByNumbers,
  findPartnersByName,
  getOrganizationProfile,
  getPartners,
  isIsoCurrency,
  Money,
  type Db,
  type ObjectStorage,
} from '@rp/platform';
import type { InboundRemittanceInput, InboundRemittanceResult } from '@rp/workflows';
import { insertRemittance, remittanceOfInboxPart, depositExists, type RemittanceEmail } from '../store/remittances.js';
import { assessRemittance, partnerByPayerName, type InvoiceCandidate } from './remittances.js';
import { recordRemittanceCreated, MAX_REMITTANCE_LINES } from './remittance-intake.js';
import { adviceParts, attachmentPart, bodyPart, candidateNumbers, readableAttachment, type PartProblem, type PartReading, type PartText } from './remittance-reading/parts.js';
import { numberKey, strippedKey } from './remittance-reading/rows.js';

/** An attachment larger than the inbox accepts a whole message (25 MiB) is not read. */
const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;

export interface InboundRemittanceDeps {
  db: Db;
  storage: ObjectStorage;
}

/**
 * The ledger's invoice numbers among `candidates`, by key and by key without a letter prefix (a key
 * two numbers share is dropped), and the open amount of each (when one number is one invoice).
 */
async function knownNumbers(db: Db, org: string, candidates: string[]): Promise<{ known: Map<string, string>; open: Map<string, string> }> {
  const docs = await findInvoicesByNumbers(db, org, candidates);
  const open = new Map<string, string>();
  const count = new Map<string, number>();
  for (const d of docs) count.set(d.document_number, (count.get(d.document_number) ?? 0) + 1);
  for (const d of docs) if (count.get(d.document_number) === 1 && d.status_open) open.set(d.document_number, d.amount_open);
  const known = new Map<string, string>();
  const clash = new Set<string>();
  for (const d of docs) {
    for (const key of [numberKey(d.document_number), strippedKey(d.document_number)]) {
      if (!key) continue;
      if (known.has(key) && known.get(key) !== d.document_number) clash.add(key);
      else known.set(key, d.document_number);
    }
  }
  for (const k of clash) known.delete(k);
  return { known, open };
}

async function readParts(deps: InboundRemittanceDeps, input: InboundRemittanceInput): Promise<{ parts: PartText[]; problems: PartProblem[] }> {
  const parts: PartText[] = [bodyPart(input.text, input.html)];
  const problems: PartProblem[] = [];
  for (const a of input.attachments) {
    // images, archives…: not advice (TNEF is read, to be reported unsupported)
    if (!readableAttachment(a)) continue;
    if (a.size > MAX_ATTACHMENT_BYTES) {
      problems.push({ part: `attachment:${a.position}`, code: 'unreadable_attachment', detail: `${a.name}: larger than ${MAX_ATTACHMENT_BYTES} bytes` });
      continue;
    }
    const read = await attachmentPart(a, await deps.storage.readObject(a.object_key, MAX_ATTACHMENT_BYTES));
    if ('code' in read) problems.push(read);
    else parts.push(read);
  }
  return { parts, problems };
}

function scale(value: string, currency: string | null): string {
  const digits = currency && isIsoCurrency(currency) ? Math.max(currencyMinorUnits(currency), 2) : 2;
  const m = new Money(value);
  return m.decimalPlaces() > digits ? m.toFixed() : m.toFixed(digits);
}

async function recordPart(deps: InboundRemittanceDeps, input: InboundRemittanceInput, p: PartReading, email: RemittanceEmail, bankTransactionId: string | null): Promise<string> {
  const org = input.organizationId;
  const existing = await remittanceOfInboxPart(deps.db, org, input.inboxMessageId, p.part);
  if (existing) return existing;
  const { reading } = p;
  const lines = reading.lines.slice(0, MAX_REMITTANCE_LINES);
  const found = await findInvoicesByNumbers(deps.db, org, lines.map((l) => l.invoice_number));
  const byNumber = new Map<string, InvoiceCandidate[]>();
  for (const d of found) byNumber.set(d.document_number, [...(byNumber.get(d.document_number) ?? []), d]);
  const currencies = new Set(found.map((d) => d.currency.trim()));
  const currency = reading.fields.currency ?? (currencies.size === 1 ? [...currencies][0]! : ((await getOrganizationProfile(deps.db, org))?.base_currency ?? null));
  const payerName = reading.fields.payer;
  const payerPartners = payerName ? await findPartnersByName(deps.db, org, payerName) : [];
  const payerPartnerId = partnerByPayerName(payerPartners, payerName);
  const partnerNames = new Map<string, string>();
  const partnerIds = [...new Set([...found.map((d) => d.partner_id), input.partnerId].filter((x): x is string => Boolean(x)))];
  for (const partner of (await getPartners(deps.db, org, partnerIds)).values()) partnerNames.set(partner.id, partner.name);
  const stated = reading.fields.amount ?? reading.stated_total;
  const transactionAmount = stated ?? (lines.length ? lines.reduce((s, l) => s.plus(l.amount_paid), new Money(0)).toFixed() : null);
  const assessment = assessRemittance({ lines, invoicesByNumber: byNumber, currency, transactionAmount, payerPartnerId, partnerNames });
  const unclear = reading.uncertainties.some((u) => u.startsWith('line_amounts_unclear'));
  const score = Number(new Money(assessment.score).times(unclear ? 0.9 : 1).toDecimalPlaces(4).toFixed(4));
  const where = p.attachment ? `the attachment ${p.attachment.name}` : 'the email body';
  // no customer from the invoices or the payer name: the one the inbox matched the email to, said so
  const partnerId = assessment.partnerId ?? input.partnerId;
  const hinted = !assessment.partnerId && input.partnerId ? ' The customer is the one the email was matched to.' : '';
  const reason = `Read ${lines.length} line${lines.length === 1 ? '' : 's'} from ${where}. ${assessment.reason}${hinted}`;
  try {
    return await insertRemittance(
      deps.db,
      org,
      {
        partner_id: partnerId,
        source: 'email',
        currency,
        transaction_amount: transactionAmount === null ? null : scale(transactionAmount, currency),
        transaction_date: reading.fields.payment_date,
        transaction_number: reading.fields.reference,
        payment_method: reading.fields.method,
        payer_name: payerName,
        payer_email: email.from,
        payer_bank_details: null,
        payee_bank_details: null,
        agent_confidence_score: score,
        agent_confidence_reason: reason,
        agent_error_code: assessment.errorCode,
        agent_uncertainties: [...reading.uncertainties, ...assessment.uncertainties],
        inbound: {
          inbox_message_id: input.inboxMessageId,
          source_part: p.part,
          email,
          attachment: p.attachment ? { object_key: p.attachment.object_key, file_name: p.attachment.name, content_type: p.attachment.mime_type, size: p.attachment.size } : null,
          bank_transaction_id: bankTransactionId,
        },
      },
      lines.map((l, i) => ({
        invoice_number: l.invoice_number,
        amount_paid: scale(l.amount_paid, currency),
        amount_discount: scale(l.amount_discount, currency),
        amount_withheld: scale(l.amount_withheld, currency),
        invoice_id: assessment.invoiceIds[i] ?? null,
      })),
      (trx, id) => recordRemittanceCreated(trx, org, id),
    );
  } catch (err) {
    // a concurrent attempt recorded the same part first: that one stands
    const again = await remittanceOfInboxPart(deps.db, org, input.inboxMessageId, p.part);
    if (again) return again;
    throw err;
  }
}

/** The remittance of a message where no advice could be read: no allocations, the reason in agent_error_code. */
async function recordUnread(deps: InboundRemittanceDeps, input: InboundRemittanceInput, email: RemittanceEmail, problems: PartProblem[], bankTransactionId: string | null): Promise<{ id: string; code: string }> {
  const code = problems.find((p) => p.code === 'unsupported_attachment')?.code ?? problems.find((p) => p.code !== 'unsupported_attachment')?.code ?? 'no_remittance_lines';
  const existing = await remittanceOfInboxPart(deps.db, input.organizationId, input.inboxMessageId, 'body');
  if (existing) return { id: existing, code };
  const detail = problems.map((p) => p.detail).join('; ');
  const reason = `No remittance lines (invoice numbers with amounts) could be read from the email or its attachments${detail ? `: ${detail}` : ''}.`;
  const id = await insertRemittance(
    deps.db,
    input.organizationId,
    {
      partner_id: input.partnerId,
      source: 'email',
      currency: null,
      transaction_amount: null,
      transaction_date: null,
      transaction_number: null,
      payment_method: null,
      payer_name: null,
      payer_email: email.from,
      payer_bank_details: null,
      payee_bank_details: null,
      agent_confidence_score: 0,
      agent_confidence_reason: reason.slice(0, 2000),
      agent_error_code: code,
      agent_uncertainties: problems.map((p) => `${p.code}: ${p.detail}`.slice(0, 500)),
      inbound: { inbox_message_id: input.inboxMessageId, source_part: 'body', email, attachment: null, bank_transaction_id: bankTransactionId },
    },
    [],
    (trx, rid) => recordRemittanceCreated(trx, input.organizationId, rid),
  ).catch(async (err) => {
    const again = await remittanceOfInboxPart(deps.db, input.organizationId, input.inboxMessageId, 'body');
    if (again) return again;
    throw err;
  });
  return { id, code };
}

/** Reads the message's advice and records its remittances (ids in part order). */
export async function recordInboundRemittances(deps: InboundRemittanceDeps, input: InboundRemittanceInput): Promise<Omit<InboundRemittanceResult, 'rematchedTransactionIds'>> {
  const org = input.organizationId;
  const email: RemittanceEmail = { object: 'inbox_message', ...input.email };
  const bankTransactionId = input.bankTransactionId && (await depositExists(deps.db, org, input.bankTransactionId)) ? input.bankTransactionId : null;
  const { parts, problems } = await readParts(deps, input);
  const { known, open } = await knownNumbers(deps.db, org, candidateNumbers(parts));
  const advice = adviceParts(parts, known, open);
  if (advice.length === 0) {
    const { id, code } = await recordUnread(deps, input, email, problems, bankTransactionId);
    return { remittanceIds: [id], errorCode: code };
  }
  const remittanceIds: string[] = [];
  // the deposit a reply is about gets the first advice; one remittance per deposit
  for (const [i, p] of advice.entries()) remittanceIds.push(await recordPart(deps, input, p, email, i === 0 ? bankTransactionId : null));
  return { remittanceIds, errorCode: null };
}
