/**
 * Email template folders and templates (spec 2.5, endpoint rows 6 and 7). v1 routes: errors use
 * the v1 shapes. Any user of the organization may manage them; everything is per organization.
 */
import { z } from 'zod';
import { idSchema, MAX_OBJECT_BYTES, pageEnvelopeSchema, pageOf, pageRequest, paginationQueryShape, STORAGE_UNAVAILABLE_DOC, timestampsShape } from '@rp/platform';
import { route } from '../../deps.js';
import * as domain from '../../domain/collections/email-templates.js';
import { folderView, newAttachmentView, templateView, verifiedAttachmentView } from '../../views/collections/email-templates.js';

const MAX_FOLDER_PAGE = 200;
const TAGS = ['Collections outreach'];

const LIQUID_DOC =
  'Subject and body are Liquid templates (liquidjs: no code execution; strict variables and filters; at most 100,000 characters, ' +
  '1 s render time and 16 MiB render memory). Variables: `customer.{name, legal_name, account_number, email, phone}`; ' +
  '`invoices` (open invoices, earliest due first) and `overdue_invoices`, each item `{number, document_date, due_date, currency, amount, amount_open, days_overdue, is_overdue}` ' +
  '(use `{% for invoice in invoices %}`, `invoices.first`, `invoices.size`); invoice amounts are decimal strings in their currency\'s minor units (JPY `15000`, EUR `100.00`). ' +
  '`totals` never adds different currencies: `totals.by_currency` lists per currency (ordered by code) `{currency, open_amount, overdue_amount, open_count, overdue_count}`; ' +
  '`totals.base` is `{currency, open_amount, overdue_amount, complete, missing_currencies, rates}` in the organization\'s base currency, converted with the latest exchange rate ' +
  '(PUT /v2/exchange-rates) on or before today of each other currency, `rates` listing each one used `{currency, rate (base units per unit), rate_date, pair}`; when a currency has no such rate, ' +
  '`complete` is false, `missing_currencies` names it and both amounts are null. `totals.open_amount`, `totals.overdue_amount` and `totals.currency` are one printable figure: ' +
  'the sum when every invoice is in one currency, the converted `totals.base` figure when there are several and all have a rate, else null (print `totals.by_currency` then); ' +
  '`totals.open_count`, `totals.overdue_count`, `totals.max_days_overdue` count across currencies. ' +
  '`sender.{name, email}`; `organization.{name, base_currency}`; `today` (YYYY-MM-DD, organization timezone); ' +
  '`payment.{amount, currency, date, reference}` (the payment a receipt confirms; previews carry a sample payment). ' +
  'Payment receipts (cash-app): the default template of the folder named by cash-app\'s `PAYMENT_RECEIPT_TEMPLATE_FOLDER` (default "Payment receipts"; ' +
  'the oldest such folder with a default) renders each receipt, with `invoices` = the invoices the payment paid, `sender` = the organization at the receipt\'s From address, ' +
  'and the body as the plain-text part (the HTML part is it escaped); without such a template the built-in receipt is sent. ' +
  'A syntax error, an unknown variable or filter, or a template that does not render against the sample customer (and its variant with a second currency, JPY or EUR, and a rate) gives 422 whose `detail` names the field, line and column. ' +
  'Renders run on a bounded pool of worker threads (TEMPLATE_RENDER_THREADS, TEMPLATE_RENDER_QUEUE), never on the API\'s event loop: a render over the 1 s limit is stopped and gives 422 (`liquid_render`); ' +
  'the limit counts the CPU time the render uses, not the time it waits: a template whose render used 20 ms of CPU renders from then on at the lowest scheduling priority, behind every request, so a busy machine slows a heavy render down but never fails a valid template. ' +
  'When every thread is busy and the queue is full, or the machine leaves a render no CPU for 10 s, the request gives 503 with Retry-After and changes nothing. ' +
  '`auto_correct`: when true, a variable path that differs from a catalogue path only by letter case, camelCase or hyphens (e.g. `{{ Customer.accountNumber }}`) ' +
  'is rewritten to the catalogue path on save instead of being refused; the saved body shows the corrected text.';

// ---------- schemas

const folderBriefShape = {
  object: z.literal('email_template_folder'),
  id: z.string(),
  name: z.string(),
  ...timestampsShape,
};

const attachmentSchema = z
  .object({
    object: z.literal('email_template_attachment'),
    id: z.string(),
    name: z.string(),
    mime_type: z.string(),
    organization_id: z.string(),
    content_id: z.string().nullable(),
    disposition: z.string(),
    purpose: z.string(),
    remote_id: z.string().nullable(),
    user_id: z.string().nullable(),
    presigned_url: z.string().nullable().describe('A fresh presigned GET of the stored bytes (null when object storage is not configured).'),
    presigned_url_expires_at: z.string().nullable().describe('When presigned_url stops working (one hour after the response).'),
    file_type: z.enum(['audio', 'image', 'video', 'text', 'document', 'archive', 'other']).describe('Category of mime_type.'),
    is_verified: z.boolean().describe('True once the uploaded bytes were checked server-side: size, sha256 and the type sniffed from the bytes match the declaration.'),
    size: z.number().int(),
    src: z.string().nullable(),
    ...timestampsShape,
  })
  .meta({ id: 'EmailTemplateAttachment' });

const templateSchema = z
  .object({
    object: z.literal('email_template'),
    id: z.string(),
    name: z.string(),
    subject: z.string(),
    body: z.string(),
    cc: z.array(z.string()),
    auto_correct: z.boolean(),
    is_default: z.boolean(),
    folder_id: z.string(),
    folder: z.object(folderBriefShape),
    attachments: z.array(attachmentSchema),
    preview_subject: z.string().nullable().describe('Rendered subject; only in preview responses (null elsewhere).'),
    preview_body: z.string().nullable().describe('Rendered body; only in preview responses (null elsewhere).'),
    ...timestampsShape,
  })
  .meta({ id: 'EmailTemplate' });

const folderSchema = z
  .object({
    ...folderBriefShape,
    template_count: z.number().int().min(0).describe('How many templates the folder holds (the listing carries only the first of them).'),
    templates: z
      .array(templateSchema)
      .describe(
        `The folder's templates, oldest first. In the folder listing at most the first ${domain.LISTED_TEMPLATES_PER_FOLDER}, each with at most its first ` +
          `${domain.LISTED_ATTACHMENTS_PER_TEMPLATE} attachments; GET /v1/email-template-folders/{folder_id} gives every template, GET /v1/email-templates/{email_template_id} every attachment.`,
      ),
  })
  .meta({ id: 'EmailTemplateFolder' });

const folderParams = z.object({ folder_id: idSchema() });
const templateParams = z.object({ email_template_id: idSchema() });
const attachmentParams = z.object({ email_template_id: idSchema(), attachment_id: idSchema() });

const folderName = z.string().trim().min(1).max(256).describe('1..256 characters (trimmed); need not be unique.');
const cc = z.array(z.email().max(254)).max(50);
const templateName = z.string().trim().min(1).max(256);
const subject = z.string().min(1).max(998);
const body = z.string().min(1).max(100_000);

export const emailTemplateRoutes = [
  // ---------- folders
  route({
    method: 'post',
    path: '/v1/email-template-folders',
    operationId: 'createEmailTemplateFolder',
    summary: 'Create an email template folder',
    description: 'Names are at most 256 characters (trimmed) and need not be unique. Answers the folder with its (empty) `templates`.',
    tags: TAGS,
    body: z.object({ name: folderName }),
    response: folderSchema,
    handler: async ({ body, identity, deps }) => folderView(deps.storage, await domain.createFolder(deps, identity.org, body.name)),
  }),
  route({
    method: 'get',
    path: '/v1/email-template-folders',
    operationId: 'listEmailTemplateFolders',
    summary: 'List email template folders',
    description:
      `Oldest first. \`page\` >= 0, \`page_size\` (alias \`size\`) 1..200. Each folder carries \`template_count\` and its first ${domain.LISTED_TEMPLATES_PER_FOLDER} templates ` +
      `(oldest first), each with its first ${domain.LISTED_ATTACHMENTS_PER_TEMPLATE} attachments, so a page costs the same however full its folders are; ` +
      'the folder itself (GET /v1/email-template-folders/{folder_id}) lists all its templates.',
    tags: TAGS,
    query: z.object(paginationQueryShape(MAX_FOLDER_PAGE)),
    response: pageEnvelopeSchema(folderSchema),
    handler: async ({ query, identity, deps }) => {
      const page = pageRequest(query, MAX_FOLDER_PAGE);
      const { rows, total } = await domain.listFolders(deps, identity.org, page.offset, page.pageSize);
      return pageOf(await Promise.all(rows.map((r) => folderView(deps.storage, r))), total, page);
    },
  }),
  route({
    method: 'get',
    path: '/v1/email-template-folders/{folder_id}',
    operationId: 'getEmailTemplateFolder',
    summary: 'Get an email template folder',
    tags: TAGS,
    params: folderParams,
    response: folderSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => folderView(deps.storage, await domain.getFolder(deps, identity.org, params.folder_id)),
  }),
  route({
    method: 'patch',
    path: '/v1/email-template-folders/{folder_id}',
    operationId: 'updateEmailTemplateFolder',
    summary: 'Rename an email template folder',
    tags: TAGS,
    params: folderParams,
    body: z.object({ name: folderName }),
    response: folderSchema,
    errors: [404],
    handler: async ({ params, body, identity, deps }) => folderView(deps.storage, await domain.renameFolder(deps, identity.org, params.folder_id, body.name)),
  }),
  route({
    method: 'delete',
    path: '/v1/email-template-folders/{folder_id}',
    operationId: 'deleteEmailTemplateFolder',
    summary: 'Delete an email template folder',
    description:
      'A folder that holds templates is refused with 409 unless `cascade=true`, which deletes its templates and their attachments (stored files too). ' +
      'A cascade over a template a collection policy step sends is refused with 409 naming the policy, and nothing is deleted. 204 on success.',
    tags: TAGS,
    params: folderParams,
    query: z.object({ cascade: z.enum(['true', 'false']).optional().describe('Also delete the folder’s templates (default false).') }),
    errors: [404, 409],
    handler: async ({ params, query, identity, deps }) => domain.deleteFolder(deps, identity.org, params.folder_id, query.cascade === 'true'),
  }),

  // ---------- templates
  route({
    method: 'post',
    path: '/v1/email-templates',
    operationId: 'createEmailTemplate',
    summary: 'Create an email template',
    description: `${LIQUID_DOC} \`is_default\`: at most one default per folder; creating a default clears the folder's previous one in the same transaction. An unknown folder gives 404.`,
    tags: TAGS,
    body: z.object({
      folder_id: idSchema(),
      name: templateName,
      subject,
      body,
      cc: cc.optional(),
      auto_correct: z.boolean().optional(),
      is_default: z.boolean().optional(),
    }),
    response: templateSchema,
    errors: [404],
    handler: async ({ body: b, identity, deps }) =>
      templateView(deps.storage, await domain.createTemplate(deps, identity, { ...b, cc: b.cc ?? [], auto_correct: b.auto_correct ?? false, is_default: b.is_default ?? false })),
  }),
  route({
    method: 'get',
    path: '/v1/email-templates/{email_template_id}',
    operationId: 'getEmailTemplate',
    summary: 'Get an email template',
    tags: TAGS,
    params: templateParams,
    response: templateSchema,
    errors: [404],
    handler: async ({ params, identity, deps }) => templateView(deps.storage, await domain.getTemplate(deps, identity.org, params.email_template_id)),
  }),
  route({
    method: 'patch',
    path: '/v1/email-templates/{email_template_id}',
    operationId: 'updateEmailTemplate',
    summary: 'Update an email template',
    description: `Only the fields sent change. ${LIQUID_DOC} Moving a default template to another folder makes it that folder's default.`,
    tags: TAGS,
    params: templateParams,
    body: z.object({
      folder_id: idSchema().optional(),
      name: templateName.optional(),
      subject: subject.optional(),
      body: body.optional(),
      cc: cc.optional(),
      auto_correct: z.boolean().optional(),
      is_default: z.boolean().optional(),
    }),
    response: templateSchema,
    errors: [404],
    handler: async ({ params, body: b, identity, deps }) => templateView(deps.storage, await domain.updateTemplate(deps, identity, params.email_template_id, b)),
  }),
  route({
    method: 'delete',
    path: '/v1/email-templates/{email_template_id}',
    operationId: 'deleteEmailTemplate',
    summary: 'Delete an email template',
    description: 'Deletes the template and its attachments (stored files too). 204 on success. A template a collection policy step sends cannot be deleted: 409 naming the policy (change the step or delete the policy first).',
    tags: TAGS,
    params: templateParams,
    errors: [404, 409],
    handler: async ({ params, identity, deps }) => domain.deleteTemplate(deps, identity.org, params.email_template_id),
  }),
  route({
    method: 'post',
    path: '/v1/email-templates/{email_template_id}/preview',
    operationId: 'previewEmailTemplate',
    summary: 'Preview an email template',
    description:
      'Renders subject and body into `preview_subject` and `preview_body`. With `partner_id`, against that customer’s live ledger data (open invoices, aging as of today in the organization’s timezone; ' +
      'a partner of another organization or outside the caller’s business units gives 404); without it, against the documented sample customer ' +
      '(Sample Customer GmbH, account C-0001, three open invoices INV-1001..1003 of which two overdue by 45 and 9 days, totals 1950.50 open and 1500.50 overdue). ' +
      'Totals are per currency (see the template variables): a customer with EUR and JPY invoices shows each currency\'s sums, and a base-currency figure only where exchange rates exist. ' +
      'A render that uses more than 1 s of CPU time gives 422 (`liquid_render`); all render threads busy and the queue full, or a render left without CPU for 10 s on a busy machine, gives 503 with Retry-After.',
    tags: TAGS,
    params: templateParams,
    body: z.object({ partner_id: idSchema().optional() }),
    response: templateSchema,
    errors: [404],
    handler: async ({ params, body: b, identity, deps }) =>
      templateView(deps.storage, await domain.previewTemplate(deps, identity, params.email_template_id, b.partner_id)),
  }),

  // ---------- attachments
  route({
    method: 'post',
    path: '/v1/email-templates/{email_template_id}/attachments',
    operationId: 'createEmailTemplateAttachment',
    summary: 'Add an attachment (presigned upload)',
    description:
      `Declares a file of \`size\` bytes (1..${MAX_OBJECT_BYTES}) and \`mime_type\`; answers the attachment with \`upload\`: a presigned PUT valid 15 minutes whose signature binds ` +
      'that exact Content-Length and Content-Type (send `upload.headers`; another size or type is refused by the storage with 403). After uploading, call ' +
      '`POST …/attachments/{attachment_id}/complete`: the server checks size, sha256 and the type sniffed from the bytes and sets `is_verified`. ' +
      STORAGE_UNAVAILABLE_DOC,
    tags: TAGS,
    params: templateParams,
    body: z.object({
      name: z.string().trim().min(1).max(255),
      mime_type: z
        .string()
        .max(127)
        .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i, 'must be a MIME type such as application/pdf'),
      size: z.number().int().min(1).max(MAX_OBJECT_BYTES),
    }),
    response: attachmentSchema.extend({
      upload: z.object({ method: z.literal('PUT'), url: z.string(), headers: z.record(z.string(), z.string()), expires_at: z.string() }),
    }),
    errors: [404, 503],
    handler: async ({ params, body: b, identity, deps }) => newAttachmentView(deps.storage, await domain.createAttachment(deps, identity, params.email_template_id, b)),
  }),
  route({
    method: 'post',
    path: '/v1/email-templates/{email_template_id}/attachments/{attachment_id}/complete',
    operationId: 'completeEmailTemplateAttachment',
    summary: 'Verify an uploaded attachment',
    description:
      'Server-side check of the uploaded bytes: size (HEAD and bytes read), sha256, and the real type sniffed from the bytes (file-type; text types: valid UTF-8 without NUL). ' +
      '`is_verified` is true only when everything matches the declaration; otherwise `verification_error` says why. 409 when nothing was uploaded yet. May be called again after a re-upload. ' +
      STORAGE_UNAVAILABLE_DOC,
    tags: TAGS,
    params: attachmentParams,
    response: attachmentSchema.extend({ verification_error: z.string().nullable() }),
    errors: [404, 409, 503],
    handler: async ({ params, identity, deps }) =>
      verifiedAttachmentView(deps.storage, await domain.completeAttachment(deps, identity.org, params.email_template_id, params.attachment_id)),
  }),
  route({
    method: 'delete',
    path: '/v1/email-templates/{email_template_id}/attachments/{attachment_id}',
    operationId: 'deleteEmailTemplateAttachment',
    summary: 'Remove an attachment',
    description: 'Deletes the attachment and its stored file. 204 on success.',
    tags: TAGS,
    params: attachmentParams,
    errors: [404],
    handler: async ({ params, identity, deps }) => domain.deleteAttachment(deps, identity.org, params.email_template_id, params.attachment_id),
  }),
];
