/** Routes of the AR inbox: list, read and correct received messages. v2. */
import { z } from 'zod';
import { idSchema, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import { INBOX_CATEGORIES, INBOX_STATUSES } from '../../domain-types/inbox.js';
import { listMessages, messageView, patchMessage } from '../../domain/inbox/messages.js';

const MAX_PAGE = 200;
const STATUS = z.enum(INBOX_STATUSES);
const CATEGORY = z.enum(INBOX_CATEGORIES);

const SCOPE =
  'Members see messages whose customer belongs to one of their business units or to none; a message matched to no customer only when they have access ' +
  'to every business unit of the organization (admins and API keys see all). Others answer 404 and are absent from lists.';

const MATCHING =
  'Matching (deterministic; `match_reasons[].rule`): `reply_to_outbound` (In-Reply-To/References name a collection email, payment receipt or ' +
  'remittance request we sent; also sets `in_reply_to`), `same_thread` (else: an earlier message of the thread was matched to the customer with ' +
  'confidence 80 or more, or by a user), `known_contact` (the sender was taught by a correction, or by an earlier reply to our own email matched at or above the threshold), `customer_email` (the sender is the ' +
  'customer\'s address in the ledger), `sender_domain` (the domain of exactly one customer\'s email; free-mail domains never count), `invoice_number` ' +
  '(invoice numbers read in subject, body and attachments resolve to the customer\'s invoices), `customer_number`, `signature_company` (the signature ' +
  'names the customer), `bounced_recipient` (a delivery-status notification says the customer\'s ledger address failed); mail systems\' own senders (mailer-daemon, postmaster, no-reply) are never matched or taught by their address; `conflict` when another customer also fits (half its confidence is taken off). `match_confidence` (0..100) combines the ' +
  'rules\' weights as independent signals. With mailbox settings `centralized_inbox.auto_assign` on and a confidence at or above ' +
  '`auto_assign_threshold`, the message is `assigned` to the customer\'s assignee (their out-of-office backup while they are out, the organization\'s ' +
  'timezone; a customer without an assignee leaves it `unassigned` with its customer); otherwise it stays `unassigned` with its best guess in `partner_id`. Settings never configured: no automatic assignment. ' +
  '`matching_guidelines` is read only by the optional language-model path; the deterministic rules ignore it.';

const addressSchema = z.object({ address: z.string(), name: z.string().nullable() });

export const inboxAttachmentSchema = z
  .object({
    object: z.literal('attachment'),
    id: z.string(),
    name: z.string(),
    mime_type: z.string(),
    organization_id: z.string(),
    content_id: z.string().nullable(),
    disposition: z.string().nullable(),
    purpose: z.string().describe('`inbox_message`.'),
    remote_id: z.string().nullable(),
    user_id: z.string().nullable(),
    presigned_url: z.string().nullable().describe('A fresh presigned GET of the stored bytes (null when object storage is not configured, and in event payloads).'),
    presigned_url_expires_at: z.string().nullable().describe('When presigned_url stops working (one hour after the response).'),
    file_type: z.enum(['audio', 'image', 'video', 'text', 'document', 'archive', 'other']).describe('Category of mime_type.'),
    is_verified: z.boolean().describe('Always true: the bytes are the ones received, stored by the platform itself.'),
    size: z.number().int(),
    src: z.string().nullable(),
    ...timestampsShape,
  })
  .meta({ id: 'InboxAttachment' });

const refSchema = z.object({ object: z.string(), id: z.string() });

export const inboxMessageSchema = z
  .object({
    object: z.literal('inbox_message'),
    id: z.string(),
    message_id: z.string().describe('The Message-ID header (angle brackets included), or `<sha256 of the message@inbound.invalid>` when it had none.'),
    thread_id: z.string().describe('The first id of References, else In-Reply-To, else its own Message-ID.'),
    from: addressSchema.nullable(),
    to: z.array(addressSchema),
    cc: z.array(addressSchema),
    subject: z.string().nullable(),
    received_at: z.string(),
    text: z.string().nullable().describe('The plain-text body (an HTML-only body as text; forwarded messages included); null until processed.'),
    attachments: z.array(inboxAttachmentSchema).describe('Every attachment in message order (spec 2.5 Attachment shape).'),
    partner_id: z.string().nullable().describe('The matched customer, or the best guess that fell short of the threshold.'),
    match_confidence: z.number().int().min(0).max(100).nullable(),
    match_reasons: z.array(z.object({ rule: z.string(), detail: z.string(), weight: z.number().int().optional() })).describe(MATCHING),
    assignee_id: z.string().nullable(),
    category: CATEGORY.nullable(),
    category_confidence: z.number().int().min(0).max(100).nullable(),
    category_reasons: z.array(z.string()),
    in_reply_to: refSchema.nullable().describe('Our own email this message answers: `collection_action` or `outreach_record` (payment receipt, remittance request).'),
    status: STATUS,
    processing_state: z.enum(['received', 'processed', 'failed']).describe('`received` until the inbox workflow has read it.'),
    processing_error: z.string().nullable().describe('Why a `failed` message could not be read, or why a processed one\'s remittance advice could not be recorded.'),
    suggestions: z.array(z.record(z.string(), z.unknown())).describe('Promises to pay or disputes read with too little confidence to record.'),
    results: z.array(refSchema).describe('Records the message led to: `promise_to_pay`, `dispute`, `remittance`.'),
    unsupported: z.array(z.object({ kind: z.string(), detail: z.string() })).describe('Parts the parser met but does not read (e.g. `tnef`: winmail.dat).'),
    ...timestampsShape,
  })
  .meta({ id: 'InboxMessage' });

export const inboxRoutes = [
  route({
    method: 'get',
    path: '/v2/inbox/messages',
    operationId: 'listInboxMessages',
    summary: 'List inbox messages',
    description: `Newest received first. Filters: \`status\`, \`partner_id\`, \`category\`, \`assignee_id\`. Paginated: \`page\` (0-based), \`page_size\` 1..${MAX_PAGE}. ${SCOPE}`,
    tags: ['Inbox'],
    query: z.object({
      ...paginationQueryShape(MAX_PAGE),
      status: STATUS.optional(),
      partner_id: idSchema().optional(),
      category: CATEGORY.optional(),
      assignee_id: idSchema().optional(),
    }),
    response: pageEnvelopeSchema(inboxMessageSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_PAGE);
      const { items, total } = await listMessages(deps, identity, { status: query.status, partner_id: query.partner_id, category: query.category, assignee_id: query.assignee_id }, page);
      return pageOf(items, total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v2/inbox/messages/{inbox_message_id}',
    operationId: 'getInboxMessage',
    summary: 'Get an inbox message',
    description: `${MATCHING} ${SCOPE}`,
    tags: ['Inbox'],
    params: z.object({ inbox_message_id: idSchema() }),
    response: inboxMessageSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => messageView(deps, identity, params.inbox_message_id),
  }),
  route({
    method: 'patch',
    path: '/v2/inbox/messages/{inbox_message_id}',
    operationId: 'updateInboxMessage',
    summary: 'Correct or assign an inbox message',
    description:
      'At least one field. `partner_id` sets the customer (confidence 100, rule `manual`; null removes it) and teaches the matcher: the sender\'s address ' +
      'becomes a known contact of that customer, so its next messages match by `known_contact` (the latest correction of an address wins); 422 when the ' +
      'partner is not the organization\'s or outside the caller\'s units. `assignee_id` (an active user; 422 otherwise) assigns the message (`assigned`; ' +
      'null → `unassigned`); `status: unassigned` clears the assignee, `assigned` needs one (422), `archived` keeps it. `category` overrides the ' +
      'classifier (confidence 100). A message that ends up `assigned` with a changed customer, assignee or status records `inbox_message.assigned`. ' +
      'The assignee is not changed by a customer correction alone. ' +
      SCOPE,
    tags: ['Inbox'],
    params: z.object({ inbox_message_id: idSchema() }),
    body: z
      .object({
        partner_id: idSchema().nullable().optional().describe('The customer (ledger partner); null: none.'),
        assignee_id: idSchema().nullable().optional().describe('The user handling the message; null: nobody.'),
        status: STATUS.optional(),
        category: CATEGORY.optional(),
      })
      .refine((b) => Object.values(b).some((v) => v !== undefined), 'give at least one of partner_id, assignee_id, status, category'),
    response: inboxMessageSchema,
    errors: [404],
    handler: async ({ params, body, identity, deps }) => patchMessage(deps, identity, params.inbox_message_id, body),
  }),
];
