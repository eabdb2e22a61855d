/**
 * The inbox as collectors use it: list, read, correct (GET/PATCH /v2/inbox/messages).
 *
 * Scope: a member sees messages whose customer belongs to one of their business units or to none;
 * a message without a customer only when they see every unit (admins and API keys always do).
 *
 * A correction of the customer teaches the matcher: the sender's address becomes a known contact
 * of that customer (inbox_known_contacts, one customer per address; the latest correction wins), so
 * the sender's next message matches by rule `known_contact`.
 */
import { getPartner, NotFoundError, recordEvent, ValidationError, type Db, type Identity, type ObjectStorage, type PageRequest } from '@rp/platform';
import type { InboxCategory, InboxStatus } from '../../domain-types/inbox.js';
import { attachmentsOf, getInboxMessage, listInboxMessages, updateInboxMessage, upsertKnownContact, type InboxFilter, type InboxMessageRow } from '../../store/inbox/messages.js';
import { getUser } from '../../store/users.js';
import { inboxMessageView } from '../../views/inbox/messages.js';

interface Deps {
  db: Db;
  storage: ObjectStorage | null;
}

export async function listMessages(deps: Deps, identity: Identity, filter: InboxFilter, page: PageRequest) {
  const { rows, total } = await listInboxMessages(deps.db, identity.org, identity.bu, filter, page.offset, page.pageSize);
  const atts = await attachmentsOf(deps.db, identity.org, rows.map((r) => r.id));
  return { items: await Promise.all(rows.map((r) => inboxMessageView(deps.storage, r, atts.get(r.id) ?? []))), total };
}

export async function messageView(deps: Deps, identity: Identity, id: string) {
  const row = await getInboxMessage(deps.db, identity.org, id, identity.bu);
  if (!row) throw new NotFoundError(`No inbox message ${id}.`);
  return inboxMessageView(deps.storage, row, (await attachmentsOf(deps.db, identity.org, [id])).get(id) ?? []);
}

export interface MessagePatch {
  partner_id?: string | null;
  assignee_id?: string | null;
  status?: InboxStatus;
  category?: InboxCategory;
}

/**
 * Applies a collector's correction. `assignee_id` set → `assigned` (null → `unassigned`) unless the
 * body says `archived`; `status: unassigned` clears the assignee; `assigned` needs an assignee (the
 * one given, or the message's). Records `inbox_message.assigned` when the message ends up assigned
 * and its customer, assignee or status changed.
 */
export async function patchMessage(deps: Deps, identity: Identity, id: string, patch: MessagePatch) {
  const updated = await deps.db.transaction(async (trx) => {
    const row = await getInboxMessage(trx, identity.org, id, identity.bu, true);
    if (!row) throw new NotFoundError(`No inbox message ${id}.`);
    const changes: Partial<InboxMessageRow> = {};
    if (patch.partner_id !== undefined) {
      if (patch.partner_id === null) {
        Object.assign(changes, { partner_id: null, business_unit_id: null, match_confidence: 0, match_reasons: [{ rule: 'manual', detail: 'Customer removed by a user.' }] });
      } else {
        const partner = await getPartner(trx, identity.org, patch.partner_id, identity.bu);
        if (!partner) throw new ValidationError([{ loc: ['body', 'partner_id'], msg: 'is not a partner of this organization', type: 'value_error.not_found' }]);
        Object.assign(changes, { partner_id: partner.id, business_unit_id: partner.business_unit_id, match_confidence: 100, match_reasons: [{ rule: 'manual', detail: 'Customer set by a user.', weight: 100 }] });
        if (row.from_address) await upsertKnownContact(trx, identity.org, row.from_address, partner.id, 'manual', identity.sub);
      }
    }
    if (patch.assignee_id !== undefined) {
      if (patch.assignee_id !== null) {
        const user = await getUser(trx, identity.org, patch.assignee_id);
        if (!user || user.deactivated_at) throw new ValidationError([{ loc: ['body', 'assignee_id'], msg: 'is not an active user of this organization', type: 'value_error.not_found' }]);
      }
      changes.assignee_id = patch.assignee_id;
      changes.status = patch.assignee_id === null ? 'unassigned' : 'assigned';
    }
    if (patch.status !== undefined) {
      changes.status = patch.status;
      if (patch.status === 'unassigned') changes.assignee_id = null;
      if (patch.status === 'assigned' && (changes.assignee_id ?? row.assignee_id) === null) {
        throw new ValidationError([{ loc: ['body', 'status'], msg: 'an assigned message needs an assignee: give assignee_id', type: 'value_error.assignee_required' }]);
      }
    }
    if (patch.category !== undefined) Object.assign(changes, { category: patch.category, category_confidence: 100, category_reasons: ['Set by a user.'] });
    const done = (await updateInboxMessage(trx, identity.org, row.id, changes))!;
    const assignedNow = done.status === 'assigned' && (done.assignee_id !== row.assignee_id || done.status !== row.status || done.partner_id !== row.partner_id);
    if (assignedNow) {
      const object = await inboxMessageView(null, done, (await attachmentsOf(trx, identity.org, [row.id])).get(row.id) ?? []);
      await recordEvent(trx, { organizationId: identity.org, type: 'inbox_message.assigned', resourceId: row.id, object, businessUnitId: done.business_unit_id });
    }
    return done;
  });
  return inboxMessageView(deps.storage, updated, (await attachmentsOf(deps.db, identity.org, [id])).get(id) ?? []);
}
