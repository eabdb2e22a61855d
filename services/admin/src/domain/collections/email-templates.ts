/**
 * Email template folders, templates and attachments (spec 2.5): the rules and the records the views show.
 *
 * - Templates are Liquid (see liquid.ts): subject and body are validated on every save.
 * - At most one default template per folder: making one the default clears the others in the same
 *   transaction, under a lock of the folder row (the partial unique index is the backstop).
 * - Attachments live in object storage through the kernel's presigned-upload lifecycle (uploads.ts):
 *   creating one answers a presigned PUT bound to the declared size and type; `complete` verifies the
 *   uploaded bytes server-side (size, sha256, sniffed type) and sets is_verified. Every response
 *   carries a fresh presigned GET (the views).
 */
import {
  checkUpload,
  ConflictError,
  customerTotals,
  declareUpload,
  exchangeRatesToBase,
  formatInMinorUnits,
  getOrganizationProfile,
  newId,
  NotFoundError,
  NotUploadedError,
  partnerWithOpenInvoices,
  requireStorage,
  uploadPolicy,
  type Db,
  type LedgerDocument,
  type Identity,
  type ObjectStorage,
  type TemplatePool,
} from '@rp/platform';
import * as store from '../../store/collections/email-templates.js';
import { getUser } from '../../store/users.js';
import { refusedWhileUsedByPolicy } from './policies.js';
import { checkTemplate, multiCurrencySampleContext, renderSavedTemplateFields, sampleAction, sampleContext, samplePayment, type TemplateContext, type TemplateInvoice } from './liquid.js';

/** Attachments: the kernel's default bounds (MAX_OBJECT_BYTES, a 15-minute PUT, a one-hour GET in every response). */
export const ATTACHMENT_UPLOADS = uploadPolicy();

interface Deps {
  db: Db;
  storage: ObjectStorage | null;
  templates: TemplatePool;
}

/**
 * In the folder listing each folder carries its first LISTED_TEMPLATES_PER_FOLDER templates (oldest first)
 * and each of those its first LISTED_ATTACHMENTS_PER_TEMPLATE attachments, so a page of folders costs a
 * bounded number of rows and presigned URLs however much the folders hold; `template_count` says how many
 * the folder holds. One folder (GET …/{folder_id}) carries all its templates; one template all its attachments.
 */
export const LISTED_TEMPLATES_PER_FOLDER = 10;
export const LISTED_ATTACHMENTS_PER_TEMPLATE = 5;

/** A template with its folder and its attachments (those to show), and its rendered preview when one was asked for. */
export interface TemplateRecord {
  template: store.TemplateRow;
  folder: store.FolderRow;
  attachments: store.AttachmentRow[];
  preview?: { subject: string; body: string };
}

/** A folder with how many templates it holds and the templates to show. */
export interface FolderRecord {
  folder: store.FolderRow;
  templateCount: number;
  templates: TemplateRecord[];
}

async function folderRecords(deps: Deps, org: string, folders: store.FolderRow[], listing = false): Promise<FolderRecord[]> {
  const ids = folders.map((f) => f.id);
  const [templates, counts] = await Promise.all([
    listing ? store.firstTemplatesOfFolders(deps.db, org, ids, LISTED_TEMPLATES_PER_FOLDER) : store.templatesOfFolders(deps.db, org, ids),
    store.templateCountsOfFolders(deps.db, org, ids),
  ]);
  const templateIds = templates.map((t) => t.id);
  const attachments = listing ? await store.firstAttachmentsOf(deps.db, org, templateIds, LISTED_ATTACHMENTS_PER_TEMPLATE) : await store.attachmentsOf(deps.db, org, templateIds);
  return folders.map((f) => ({
    folder: f,
    templateCount: counts.get(f.id) ?? 0,
    templates: templates.filter((t) => t.folder_id === f.id).map((t) => templateRecord(t, f, attachments)),
  }));
}

function templateRecord(template: store.TemplateRow, folder: store.FolderRow, attachments: store.AttachmentRow[], preview?: { subject: string; body: string }): TemplateRecord {
  return { template, folder, attachments: attachments.filter((a) => a.template_id === template.id), ...(preview ? { preview } : {}) };
}

// ---------- folders

export async function listFolders(deps: Deps, org: string, offset: number, limit: number) {
  const { rows, total } = await store.listFolders(deps.db, org, offset, limit);
  return { rows: await folderRecords(deps, org, rows, true), total };
}

export async function getFolder(deps: Deps, org: string, id: string) {
  const f = await store.getFolder(deps.db, org, id);
  if (!f) throw new NotFoundError(`No email template folder ${id}.`);
  return (await folderRecords(deps, org, [f]))[0]!;
}

export async function createFolder(deps: Deps, org: string, name: string) {
  return (await folderRecords(deps, org, [await store.insertFolder(deps.db, org, name)]))[0]!;
}

export async function renameFolder(deps: Deps, org: string, id: string, name: string) {
  const f = await store.updateFolder(deps.db, org, id, name);
  if (!f) throw new NotFoundError(`No email template folder ${id}.`);
  return (await folderRecords(deps, org, [f]))[0]!;
}

/** Delete a folder; one holding templates only with `cascade` (its templates and their stored files go too). */
export async function deleteFolder(deps: Deps, org: string, id: string, cascade: boolean): Promise<void> {
  // a template a collection policy step sends refuses the cascade (409 naming the policy): nothing goes
  const uses = async () => ({ email: await store.templateIdsOfFolder(deps.db, org, id) });
  const keys = await refusedWhileUsedByPolicy(deps.db, org, `A template of email template folder ${id}`, uses, () =>
    deps.db.transaction(async (trx) => {
      const f = await store.getFolder(trx, org, id, { forUpdate: true });
      if (!f) throw new NotFoundError(`No email template folder ${id}.`);
      const count = await store.countTemplatesOfFolder(trx, org, id);
      if (count > 0 && !cascade) throw new ConflictError(`The folder holds ${count} template(s); delete them first or pass ?cascade=true.`);
      const objectKeys = await store.objectKeysOfFolder(trx, org, id);
      await store.deleteFolder(trx, org, id);
      return objectKeys;
    }),
  );
  await removeObjects(deps, keys);
}

async function removeObjects(deps: Deps, keys: string[]): Promise<void> {
  // After the commit: an object whose delete fails is an orphan (unreachable: its row is gone), never
  // a row pointing at nothing.
  if (deps.storage) await Promise.allSettled(keys.map((k) => deps.storage!.deleteObject(k)));
}

// ---------- templates

interface TemplateInput {
  folder_id: string;
  name: string;
  subject: string;
  body: string;
  cc: string[];
  auto_correct: boolean;
  is_default: boolean;
}

const API_KEY_SENDER = { name: 'API key', email: 'no-reply@receivables.local' };

async function senderOf(deps: Pick<Deps, 'db'>, identity: Identity) {
  const user = identity.sub ? await getUser(deps.db, identity.org, identity.sub) : undefined;
  return senderView(user ?? null);
}

function senderView(user: { name: string; email: string } | null) {
  return user ? { name: user.name || user.email, email: user.email } : API_KEY_SENDER;
}

/** Date formatters per timezone (building one costs more than a whole preview's render); bounded. */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

function todayIn(timezone: string): string {
  let format = dayFormats.get(timezone);
  if (!format) {
    if (dayFormats.size >= 1_000) dayFormats.clear();
    format = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormats.set(timezone, format);
  }
  return format.format(new Date());
}

type OrgProfile = { name: string; base_currency: string; timezone: string } | null;

function sampleOf(org: OrgProfile, sender: { name: string; email: string }): TemplateContext {
  return sampleContext({ name: org?.name ?? 'Organization', base_currency: org?.base_currency ?? 'EUR' }, sender, todayIn(org?.timezone ?? 'UTC'));
}

/** The contexts a template is checked against on save: the sample customer and its multi-currency variant. */
export async function samplesFor(deps: Pick<Deps, 'db'>, identity: Identity): Promise<TemplateContext[]> {
  const [org, sender] = await Promise.all([getOrganizationProfile(deps.db, identity.org), senderOf(deps, identity)]);
  const profile = { name: org?.name ?? 'Organization', base_currency: org?.base_currency ?? 'EUR' };
  const today = todayIn(org?.timezone ?? 'UTC');
  return [sampleContext(profile, sender, today), multiCurrencySampleContext(profile, sender, today)];
}

async function validated(deps: Deps, identity: Identity, t: Pick<TemplateInput, 'subject' | 'body' | 'auto_correct'>) {
  const samples = await samplesFor(deps, identity);
  const subject = await checkTemplate(deps.templates, 'subject', t.subject, t.auto_correct, samples);
  const body = await checkTemplate(deps.templates, 'body', t.body, t.auto_correct, samples);
  return { subject: subject.source, body: body.source };
}

async function loadTemplate(deps: Deps, org: string, id: string): Promise<TemplateRecord> {
  const t = await store.getTemplate(deps.db, org, id);
  if (!t) throw new NotFoundError(`No email template ${id}.`);
  const folder = (await store.getFolder(deps.db, org, t.folder_id))!;
  return templateRecord(t, folder, await store.attachmentsOf(deps.db, org, [t.id]));
}

export async function getTemplate(deps: Deps, org: string, id: string) {
  return loadTemplate(deps, org, id);
}

export async function createTemplate(deps: Deps, identity: Identity, input: TemplateInput) {
  const org = identity.org;
  const { subject, body } = await validated(deps, identity, input);
  const row = await deps.db.transaction(async (trx) => {
    const folder = await store.getFolder(trx, org, input.folder_id, { forUpdate: true });
    if (!folder) throw new NotFoundError(`No email template folder ${input.folder_id}.`);
    if (input.is_default) await store.clearDefault(trx, org, folder.id, null);
    return store.insertTemplate(trx, org, { ...input, subject, body });
  });
  return loadTemplate(deps, org, row.id);
}

export async function updateTemplate(deps: Deps, identity: Identity, id: string, patch: Partial<TemplateInput>) {
  const org = identity.org;
  const current = await store.getTemplate(deps.db, org, id);
  if (!current) throw new NotFoundError(`No email template ${id}.`);
  const next = { subject: patch.subject ?? current.subject, body: patch.body ?? current.body, auto_correct: patch.auto_correct ?? current.auto_correct };
  const changesText = patch.subject !== undefined || patch.body !== undefined || patch.auto_correct !== undefined;
  const texts = changesText ? await validated(deps, identity, next) : {};
  await deps.db.transaction(async (trx) => {
    const folderId = patch.folder_id ?? current.folder_id;
    const folder = await store.getFolder(trx, org, folderId, { forUpdate: true });
    if (!folder) throw new NotFoundError(`No email template folder ${folderId}.`);
    const becomesDefault = patch.is_default ?? current.is_default;
    if (becomesDefault) await store.clearDefault(trx, org, folderId, id);
    const updated = await store.updateTemplate(trx, org, id, { ...patch, ...texts, is_default: becomesDefault });
    if (!updated) throw new NotFoundError(`No email template ${id}.`);
  });
  return loadTemplate(deps, org, id);
}

/** Deletes a template; one a collection policy step sends is refused (409 naming the policy, nothing deleted). */
export async function deleteTemplate(deps: Deps, org: string, id: string): Promise<void> {
  const keys = (await store.attachmentsOf(deps.db, org, [id])).map((a) => a.object_key);
  const deleted = await refusedWhileUsedByPolicy(deps.db, org, `Email template ${id}`, async () => ({ email: [id] }), () => store.deleteTemplate(deps.db, org, id));
  if (!deleted) throw new NotFoundError(`No email template ${id}.`);
  await removeObjects(deps, keys);
}

// ---------- preview

export function invoiceOf(d: LedgerDocument, today: string): TemplateInvoice {
  const due = d.net_due_date;
  const days = due && due < today ? Math.round((Date.parse(today) - Date.parse(due)) / 86_400_000) : 0;
  const currency = d.currency.trim();
  return {
    number: d.document_number,
    document_date: d.document_date,
    due_date: due,
    currency,
    amount: formatInMinorUnits(d.amount_in_document_currency, currency),
    amount_open: formatInMinorUnits(d.amount_open, currency),
    days_overdue: days,
    is_overdue: days > 0,
  };
}

export type Ledger = NonNullable<Awaited<ReturnType<typeof partnerWithOpenInvoices>>>;

/**
 * The template context of a live customer (its partner row and open invoices from the kernel read
 * module): totals per currency, and in the base currency with cash-app's stored exchange rates on or
 * before today (kernel currency-totals.ts), one query more only when a currency other than the base one is open.
 */
async function liveContext(db: Db, organizationId: string, ledger: Ledger, org: OrgProfile, sender: { name: string; email: string }): Promise<TemplateContext> {
  const context = await customerContext(db, organizationId, ledger, org, sender, todayIn(org?.timezone ?? 'UTC'));
  return { ...context, action: sampleAction(context.invoices) };
}

/**
 * The live customer's context as of `today` (a collection run's date), without the action: the
 * caller adds the action it renders for.
 */
export async function customerContext(db: Db, organizationId: string, ledger: Ledger, org: OrgProfile, sender: { name: string; email: string }, today: string): Promise<Omit<TemplateContext, 'action'>> {
  const { partner } = ledger;
  const invoices = ledger.invoices.map((d) => invoiceOf(d, today));
  const overdue = invoices.filter((i) => i.is_overdue);
  const base = org?.base_currency ?? 'EUR';
  const rates = await exchangeRatesToBase(db, organizationId, base, today, invoices.map((i) => i.currency));
  return {
    customer: { name: partner.name, legal_name: partner.legal_name, account_number: partner.account_number, email: partner.email, phone: partner.phone },
    invoices,
    overdue_invoices: overdue,
    totals: customerTotals(invoices, base, rates),
    sender,
    organization: { name: org?.name ?? '', base_currency: base },
    payment: samplePayment(base, today),
    today,
  };
}

/**
 * Render a template for a customer (or the sample customer). The hot path of template editing, so:
 * admin's own rows (template, folder, attachments, organization, sender) in one query and the
 * customer's ledger (partner within the caller's business units, open invoices) in one more, in
 * parallel; the renders run on the template pool's threads, which reuse the parsed template while
 * its modified_at and text are unchanged (the kernel's ParsedTemplateCache). Nothing else outlives the
 * request.
 */
export async function previewTemplate(deps: Deps, identity: Identity, id: string, partnerId: string | undefined) {
  const [source, ledger] = await Promise.all([
    store.previewSource(deps.db, identity.org, id, identity.sub ?? null),
    partnerId ? partnerWithOpenInvoices(deps.db, identity.org, partnerId, identity.bu) : null,
  ]);
  if (!source) throw new NotFoundError(`No email template ${id}.`);
  if (partnerId && !ledger) throw new NotFoundError(`No partner ${partnerId}.`);
  const sender = senderView(source.sender);
  const context = ledger ? await liveContext(deps.db, identity.org, ledger, source.organization, sender) : sampleOf(source.organization, sender);
  const t = source.template;
  // one after the other: a preview holds at most one render thread
  const preview = await renderSavedTemplateFields(deps.templates, t, [['subject', t.subject], ['body', t.body]] as const, context);
  return templateRecord(t, source.folder, source.attachments, preview);
}

// ---------- attachments

export async function createAttachment(deps: Deps, identity: Identity, templateId: string, input: { name: string; mime_type: string; size: number }) {
  const storage = requireStorage(deps.storage);
  const t = await store.getTemplate(deps.db, identity.org, templateId);
  if (!t) throw new NotFoundError(`No email template ${templateId}.`);
  const id = newId();
  const { key, upload } = await declareUpload(storage, ATTACHMENT_UPLOADS, { organizationId: identity.org, area: ['email-templates', templateId], id, size: input.size, contentType: input.mime_type });
  const row = await store.insertAttachment(deps.db, { id, organization_id: identity.org, template_id: templateId, user_id: identity.sub, name: input.name, mime_type: input.mime_type, size: input.size, object_key: key });
  return { attachment: row, upload };
}

/** Check the uploaded bytes (size, sha256, sniffed type) and record the outcome; a re-upload may be checked again. */
export async function completeAttachment(deps: Deps, org: string, templateId: string, id: string) {
  const storage = requireStorage(deps.storage);
  const a = await store.getAttachment(deps.db, org, templateId, id);
  if (!a) throw new NotFoundError(`No attachment ${id} on email template ${templateId}.`);
  const checked = await checkUpload(storage, { key: a.object_key, size: a.size, contentType: a.mime_type });
  if (!checked) throw new NotUploadedError('attachment');
  const row = await store.recordVerification(deps.db, a.id, checked);
  return { attachment: row, verificationError: checked.verification_error };
}

export async function deleteAttachment(deps: Deps, org: string, templateId: string, id: string): Promise<void> {
  const a = await store.getAttachment(deps.db, org, templateId, id);
  if (!a || !(await store.deleteAttachment(deps.db, org, templateId, id))) throw new NotFoundError(`No attachment ${id} on email template ${templateId}.`);
  await removeObjects(deps, [a.object_key]);
}
