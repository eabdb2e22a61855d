/**
 * What the inbox workflow does with one accepted message (workflows/src/admin/inbox-message.ts):
 *
 * 1. `processMessage`: the raw message from object storage → parse (parse.ts; attachments stored
 *    one object each) → the deterministic readers (category, promise, dispute, numbers, signature)
 *    → the customer match (match.ts) → assignment → the collections actor (promises to pay,
 *    disputes, bounces; idempotent per message) — all written on the row while it is `received`.
 *    Answers what cash-app is to read when the message carries remittance advice.
 * 2. cash-app's recordInboundRemittances (its own task queue), when asked.
 * 3. `finishMessage`: the remittances join the message's results, the message becomes `processed`,
 *    and `inbox_message.received` (and `inbox_message.assigned` for an automatic assignment) are
 *    recorded in the same transaction, once.
 *
 * Assignment (mailbox settings → centralized_inbox; never configured: auto_assign off): with
 * auto_assign on and a confidence at or above auto_assign_threshold the message is `assigned` to its
 * customer's assignee — or to that assignee's out-of-office backup of the day (organization's
 * timezone); a customer without an assignee leaves it `unassigned` with its customer. Otherwise it stays `unassigned` without an assignee, keeping its best guess in
 * partner_id and the confidence that fell short.
 *
 * A reply to our own email matched at or above the threshold makes its sender a known contact of
 * the customer (source `reply`), unless the address is known already; a user's correction
 * (source `manual`) always replaces it.
 */
import { attachmentKind, customerHandlerToday, getPartner, recordEvents, requireStorage, type Db, type Logger, type NewEvent, type ObjectStorage } from '@rp/platform';
import type { Client } from '@temporalio/client';
import type { InboundRemittanceInput, InboundRemittanceResult, InboxMessageInput } from '@rp/workflows';
import { MAX_INBOUND_MESSAGE_BYTES, type InboxRef, type ParsedInboundMessage } from '../../domain-types/inbox.js';
import { organizationToday } from '../../store/collections/promises.js';
import { addKnownContactFromReply, attachmentsOf, getInboxMessage, inboxSettings, updateInboxMessage, type InboxMessageRow } from '../../store/inbox/messages.js';
import { inboxMessageView } from '../../views/inbox/messages.js';
import { actOnReading } from './act.js';
import { inboxEventUnit } from './messages.js';
import { storeAttachments } from './attachments.js';
import { matchMessage, SYSTEM_SENDER } from './match.js';
import { parseMime } from './parse.js';
import { readMessage } from './reading/index.js';

/** The confidence a message's customer is trusted from when the organization set no threshold (the settings' default). */
export const DEFAULT_AUTO_ASSIGN_THRESHOLD = 80;

export interface InboxProcessDeps {
  db: Db;
  storage: ObjectStorage | null;
  log: Logger;
  /** the actor starts a recorded promise's workflow */
  temporal: Client;
}

export type ProcessOutcome = { state: 'missing' } | { state: 'done' } | { state: 'processing'; remittance: InboundRemittanceInput | null; autoAssigned: boolean };

const ADVICE_KINDS = new Set(['pdf', 'csv', 'xlsx']);

/** Remittance advice for cash-app: the reading says so, or a PDF/CSV/XLSX attachment names invoice-like numbers. */
function carriesAdvice(category: string, attachments: ParsedInboundMessage['attachments'], numbers: readonly string[]): boolean {
  if (category === 'remittance') return true;
  if (category === 'bounce' || category === 'auto_reply') return false;
  return numbers.length > 0 && attachments.some((a) => ADVICE_KINDS.has(String(attachmentKind(a.mime_type, a.name))) && a.text && numbers.some((n) => a.text!.includes(n)));
}

function remittanceInput(row: InboxMessageRow, msg: ParsedInboundMessage, partnerId: string | null, bankTransactionId: string | null): InboundRemittanceInput {
  return {
    organizationId: row.organization_id,
    inboxMessageId: row.id,
    email: { id: row.id, message_id: row.message_id, from: msg.from?.address ?? null, from_name: msg.from?.name ?? null, subject: msg.subject, received_at: row.received_at.toISOString() },
    text: msg.text,
    html: msg.html && msg.html.length <= 1024 * 1024 ? msg.html : null,
    attachments: msg.attachments.map((a) => ({ position: a.position, name: a.name, mime_type: a.mime_type, size: a.size, object_key: a.object_key })),
    partnerId,
    bankTransactionId,
  };
}

export async function processMessage(deps: InboxProcessDeps, input: InboxMessageInput): Promise<ProcessOutcome> {
  const row = await getInboxMessage(deps.db, input.organizationId, input.inboxMessageId);
  if (!row) return { state: 'missing' };
  if (row.processing_state !== 'received') return { state: 'done' };
  const storage = requireStorage(deps.storage);
  const raw = await storage.readObject(row.raw_object_key, MAX_INBOUND_MESSAGE_BYTES + 1024 * 1024);
  if (!raw) throw new Error(`raw message ${row.raw_object_key} is missing from object storage`);

  const mime = await parseMime(raw, row.message_id);
  const stored = await storeAttachments({ db: deps.db, storage }, row.organization_id, row.id, mime.attachments);
  const msg: ParsedInboundMessage = { ...mime.message, attachments: stored.parsed, unsupported: [...mime.message.unsupported, ...stored.unsupported] };

  const today = (await organizationToday(deps.db, row.organization_id))!;
  const reading = readMessage(msg, { today: today.today, timezone: today.timezone });
  const match = await matchMessage(deps.db, row.organization_id, msg, reading);
  const { centralized_inbox: settings } = await inboxSettings(deps.db, row.organization_id);
  const threshold = settings?.auto_assign_threshold ?? DEFAULT_AUTO_ASSIGN_THRESHOLD;
  const partner = match.partner_id ? await getPartner(deps.db, row.organization_id, match.partner_id) : null;
  const confident = partner !== null && match.confidence >= threshold;
  const handler = settings?.auto_assign && confident ? await customerHandlerToday(deps.db, row.organization_id, partner!.id) : null;
  // a customer nobody is assigned to keeps the message unassigned (with its customer) for a collector to take
  const autoAssign = Boolean(handler?.handler_id);

  // a confident reply to our own email teaches its sender (a colleague of the addressee, a shared
  // mailbox); a bounce or an automatic reply threads to it too, but its sender is a machine
  const answeredByPerson = reading.category !== 'bounce' && reading.category !== 'auto_reply' && msg.from !== null && !SYSTEM_SENDER.test(msg.from.address);
  if (confident && answeredByPerson && match.reasons.some((r) => r.rule === 'reply_to_outbound')) await addKnownContactFromReply(deps.db, row.organization_id, msg.from!.address, partner!.id);

  const acted = await actOnReading(deps, {
    organizationId: row.organization_id,
    message: { id: row.id, partner_id: partner?.id ?? null, from_address: msg.from?.address ?? null },
    reading,
    partnerConfident: confident,
  });

  await updateInboxMessage(deps.db, row.organization_id, row.id, {
    from_address: msg.from?.address ?? row.from_address,
    from_name: msg.from?.name ?? row.from_name,
    to_addresses: msg.to,
    cc_addresses: msg.cc,
    subject: msg.subject ?? row.subject,
    sent_at: msg.date ? new Date(msg.date) : row.sent_at,
    text_body: msg.text,
    unsupported: msg.unsupported,
    partner_id: partner?.id ?? null,
    business_unit_id: partner?.business_unit_id ?? null,
    match_confidence: match.confidence,
    match_reasons: match.reasons,
    assignee_id: handler?.handler_id ?? null,
    status: autoAssign ? 'assigned' : 'unassigned',
    category: reading.category,
    category_confidence: reading.category_confidence,
    category_reasons: reading.category_reasons,
    in_reply_to_object: match.in_reply_to?.object ?? null,
    in_reply_to_id: match.in_reply_to?.id ?? null,
    suggestions: acted.suggestions,
    results: acted.results,
  });
  const advice = carriesAdvice(reading.category, msg.attachments, reading.referenced_numbers);
  deps.log.info({ organization_id: row.organization_id, inbox_message_id: row.id, category: reading.category, partner_id: partner?.id ?? null, confidence: match.confidence, assigned: autoAssign }, 'inbox message read');
  return { state: 'processing', remittance: advice ? remittanceInput(row, msg, partner?.id ?? null, match.bank_transaction_id) : null, autoAssigned: autoAssign };
}

/** Marks the message processed with the remittances cash-app recorded, and records its events (once: a retry finds it processed). */
export async function finishMessage(
  deps: { db: Db },
  input: InboxMessageInput & { remittance: InboundRemittanceResult | null; remittanceError: string | null; autoAssigned: boolean },
): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const row = await getInboxMessage(trx, input.organizationId, input.inboxMessageId, '*', true);
    if (!row || row.processing_state !== 'received') return;
    const remittances: InboxRef[] = (input.remittance?.remittanceIds ?? []).map((id) => ({ object: 'remittance', id }));
    const results = [...row.results, ...remittances.filter((r) => !row.results.some((x) => x.object === r.object && x.id === r.id))];
    const done = (await updateInboxMessage(trx, row.organization_id, row.id, { processing_state: 'processed', processing_error: input.remittanceError ? `The remittance advice could not be recorded: ${input.remittanceError}`.slice(0, 2000) : null, results }))!;
    // the event shows the message as the API does, without presigned URLs (they would expire in the log)
    const object = await inboxMessageView(null, done, (await attachmentsOf(trx, row.organization_id, [row.id])).get(row.id) ?? []);
    const base = { organizationId: row.organization_id, resourceId: row.id, object, businessUnitId: inboxEventUnit(done) };
    const events: NewEvent[] = [{ ...base, type: 'inbox_message.received' }];
    if (input.autoAssigned && done.status === 'assigned') events.push({ ...base, type: 'inbox_message.assigned' });
    await recordEvents(trx, events);
  });
}

/** Records why the message could not be read (the raw message stays in storage; a user may still assign it by hand). */
export async function failMessage(deps: { db: Db }, input: InboxMessageInput & { error: string }): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const row = await getInboxMessage(trx, input.organizationId, input.inboxMessageId, '*', true);
    if (!row || row.processing_state !== 'received') return;
    await updateInboxMessage(trx, row.organization_id, row.id, { processing_state: 'failed', processing_error: input.error.slice(0, 2000) });
  });
}
