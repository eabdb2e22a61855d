/**
 * Doing one planned collection action, exactly once (DESIGN §10 "Outreach"): an email is rendered
 * from the step's Liquid template with the customer's live ledger and the action, recorded as intent
 * (collection_messages) before the SMTP call and as sent after (kernel sendRecordedEmail: claim,
 * send with the Message-ID `<message id@MAIL_FROM domain>`, immediate best-effort sent-write); a
 * task is created once per action (unique action_id). The action's end (sent or failed, failed
 * releasing its step marks) and its `collection_action.*` event are one transaction.
 *
 * Headers: From is the sender's name at MAIL_FROM's address (the organization's transport sends as
 * the platform), Reply-To `ar@<the organization's inbound hostname>` so replies reach its AR inbox.
 */
import { getDocuments, getOrganizationProfile, partnerCountry, toE164, partnerWithOpenInvoices, recordEvent, sendRecordedEmail, ValidationError, type Db, type Mailer, type TemplatePool } from '@rp/platform';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import * as actions from '../../store/collections/actions.js';
import { insertTask } from '../../store/collections/tasks.js';
import { getUser } from '../../store/users.js';
import { getMailboxSettings } from '../../store/mailbox-settings.js';
import { collectionActionView } from '../../views/collections/runs.js';
import { customerContext, invoiceOf } from './email-templates.js';
import { renderSavedTemplate, renderSavedTemplateFields, type ActionContext } from './liquid.js';
import { daysBetween } from './plan.js';
import { effectiveInboundHostname } from '../mailbox-settings.js';

export interface OutreachDeps {
  db: Db;
  log: Logger;
  mailer: Mailer;
  templates: TemplatePool;
  /** MAIL_FROM: its address is the envelope and From address */
  from: string;
  inboundDomain: string;
}

export type DoOutcome =
  | { status: 'sent' | 'already-done' | 'failed' }
  | { status: 'retry'; error: string }
  | { status: 'quiet'; untilMs: number }
  | { status: 'unrecorded'; messageId: string | null; providerMessageId: string | null; segments: number | null };

/**
 * Per-batch memo of the rows every action of a batch shares (organization, reply-to host, policy
 * steps, templates, senders): one query each per batch instead of one per email.
 */
export interface Lookups {
  org(): Promise<Awaited<ReturnType<typeof getOrganizationProfile>>>;
  replyHost(): Promise<string>;
  step(policyId: string, offsetDays: number): Promise<Record<string, unknown> | undefined>;
  template(table: 'email_templates' | 'sms_templates', id: string): Promise<actions.TemplateRow | undefined>;
  user(id: string): Promise<Awaited<ReturnType<typeof getUser>>>;
}

export function batchLookups(db: Db, organizationId: string, inboundDomain: string): Lookups {
  const memo = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, load: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) memo.set(key, load());
    return memo.get(key) as Promise<T>;
  };
  return {
    org: () => once('org', () => getOrganizationProfile(db, organizationId)),
    replyHost: () =>
      once('host', async () => {
        const settings = await getMailboxSettings(db, organizationId);
        return effectiveInboundHostname(settings ?? { organization_id: organizationId, inbound_parse_hostname: null }, inboundDomain);
      }),
    step: (policyId, offsetDays) => once(`step:${policyId}:${offsetDays}`, () => actions.policyStep(db, policyId, offsetDays)),
    template: (table, id) => once(`${table}:${id}`, () => actions.templateRow(db, table, organizationId, id)),
    user: (id) => once(`user:${id}`, () => getUser(db, organizationId, id)),
  };
}

/** The address of a From header (`Name <a@b>` or `a@b`). */
export function addressOf(from: string): string {
  return from.match(/<([^>]+)>/)?.[1] ?? from.trim();
}

/** `"Name" <address>` with the name's quotes and backslashes escaped. */
export function fromHeader(name: string, address: string): string {
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`).replace(/[\r\n]+/g, ' ')}" <${address}>`;
}

export async function endAction(db: Db, organizationId: string, id: string, outcome: { sent: true } | { error: string }, inTrx?: (trx: Knex.Transaction) => Promise<void>): Promise<void> {
  await db.transaction(async (trx) => {
    if (inTrx) await inTrx(trx);
    const row = 'sent' in outcome ? await actions.markActionSent(trx, id) : await actions.markActionFailed(trx, id, outcome.error);
    if (row) {
      await recordEvent(trx, {
        organizationId,
        type: 'sent' in outcome ? 'collection_action.sent' : 'collection_action.failed',
        resourceId: row.id,
        object: collectionActionView(row),
        businessUnitId: row.business_unit_id,
      });
    }
  });
}

/** Ends the action sent with its message's result (the record step; idempotent). */
export async function recordActionSent(
  db: Db,
  organizationId: string,
  actionId: string,
  result: { messageId: string | null; providerMessageId: string | null; segments: number | null },
  messageRowId?: string,
): Promise<void> {
  const id = messageRowId ?? (await actions.messageOfAction(db, actionId))?.id;
  await endAction(db, organizationId, actionId, { sent: true }, async (trx) => {
    if (id) await actions.markMessageSent(trx, id, result);
  });
}

/** Ends the action failed (its marks released, its message failed) with an error written for users. */
export async function failAction(db: Db, organizationId: string, actionId: string, error: string): Promise<void> {
  const message = await actions.messageOfAction(db, actionId);
  await endAction(db, organizationId, actionId, { error }, async (trx) => {
    if (message) await actions.markMessageError(trx, message.id, error, true);
  });
}

/** The action's invoices as templates see them (`action.invoices`), from the live ledger, as of the run's date. */
function actionContext(a: actions.ActionRow, ledger: NonNullable<Awaited<ReturnType<typeof partnerWithOpenInvoices>>>, asOf: string): ActionContext {
  const chased = new Set(a.invoice_ids);
  return {
    step: { index: a.step_index, offset_days: a.offset_days, channel: a.channel },
    invoices: ledger.invoices
      .filter((d) => chased.has(d.id))
      .map((d) => {
        const i = invoiceOf(d, asOf);
        return { number: i.number, document_date: i.document_date, due_date: i.due_date, currency: i.currency, amount_open: i.amount_open, days_overdue: d.net_due_date ? Math.max(0, daysBetween(d.net_due_date, asOf)) : 0 };
      }),
  };
}

export interface RenderedAction {
  to: string;
  subject: string | null;
  body: string;
  sender: { name: string; email: string };
  context: ActionContext;
}

/** The step's template of an action rendered for its customer; null when the customer is gone. Throws ValidationError when the template fails on this customer. */
export async function renderAction(deps: Pick<OutreachDeps, 'db' | 'templates'>, a: actions.ActionRow, asOf: string, lookups: Lookups): Promise<RenderedAction | { error: string }> {
  const [ledger, org, sender, step] = await Promise.all([
    partnerWithOpenInvoices(deps.db, a.organization_id, a.partner_id),
    lookups.org(),
    a.sender_user_id ? lookups.user(a.sender_user_id) : undefined,
    a.policy_id ? lookups.step(a.policy_id, a.offset_days) : undefined,
  ]);
  if (!ledger) return { error: 'The customer no longer exists.' };
  if (!step || step.channel !== a.channel) return { error: 'The policy step of this action no longer exists.' };
  const templateId = (a.channel === 'email' ? step.email_template_id : step.sms_template_id) as string;
  const template = await lookups.template(a.channel === 'email' ? 'email_templates' : 'sms_templates', templateId);
  if (!template) return { error: 'The template of this step no longer exists.' };
  const senderView = sender ? { name: sender.name || sender.email, email: sender.email } : { name: org?.name ?? 'Accounts receivable', email: '' };
  const action = actionContext(a, ledger, asOf);
  const context = { ...(await customerContext(deps.db, a.organization_id, ledger, org, senderView, asOf)), action };
  const to = a.channel === 'email' ? (ledger.partner.email ?? '').trim() : (toE164((ledger.partner.phone ?? '').trim(), (await partnerCountry(deps.db, a.organization_id, a.partner_id)) ?? undefined) ?? '');
  if (a.channel === 'email') {
    const { subject, body } = await renderSavedTemplateFields(deps.templates, template, [['subject', template.subject ?? ''], ['body', template.body]] as const, context);
    return { to, subject, body, sender: senderView, context: action };
  }
  const body = await renderSavedTemplate(deps.templates, template, 'body', template.body, context);
  return { to, subject: null, body, sender: senderView, context: action };
}

/**
 * The action's message rendered, or null once the action is recorded failed: its template fails on
 * this customer, the customer or the step is gone, or the customer has no address (`noAddress`).
 */
export async function renderOrFail(deps: Pick<OutreachDeps, 'db' | 'templates'>, a: actions.ActionRow, asOf: string, lookups: Lookups, noAddress: string): Promise<RenderedAction | null> {
  let rendered: RenderedAction | { error: string };
  try {
    rendered = await renderAction(deps, a, asOf, lookups);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    rendered = { error: err.message };
  }
  const error = 'error' in rendered ? rendered.error : rendered.to ? null : noAddress;
  if (error === null) return rendered as RenderedAction;
  await failAction(deps.db, a.organization_id, a.id, error);
  return null;
}

/** Does one planned email action (see the module comment). */
export async function doEmailAction(deps: OutreachDeps, a: actions.ActionRow, asOf: string, lastPass: boolean, lookups: Lookups, known?: actions.MessageRow | null): Promise<DoOutcome> {
  // `known`: the batch's prefetched message of this action (null: none yet); undefined: look it up
  let message = known === undefined ? await actions.messageOfAction(deps.db, a.id) : (known ?? undefined);
  if (!message) {
    const rendered = await renderOrFail(deps, a, asOf, lookups, 'The customer has no email address.');
    if (!rendered) return { status: 'failed' };
    const host = await lookups.replyHost();
    message = await actions.messageIntent(deps.db, {
      organization_id: a.organization_id,
      action_id: a.id,
      partner_id: a.partner_id,
      business_unit_id: a.business_unit_id,
      channel: 'email',
      to_address: rendered.to,
      from_address: fromHeader(rendered.sender.name, addressOf(deps.from)),
      reply_to: `ar@${host}`,
      subject: rendered.subject,
      body: rendered.body,
      segments: null,
    });
  }
  const intent = message;
  let recorded = false;
  let smtpError: (Error & { responseCode?: number }) | null = null;
  try {
    const result = await sendRecordedEmail({
      mailer: deps.mailer,
      log: deps.log,
      intentId: intent.id,
      message: { from: intent.from_address, to: intent.to_address, subject: intent.subject ?? '', text: intent.body, headers: intent.reply_to ? { 'Reply-To': intent.reply_to } : {} },
      store: {
        beginAttempt: () => actions.beginMessageAttempt(deps.db, intent.id),
        markSent: async (messageId) => {
          await recordActionSent(deps.db, a.organization_id, a.id, { messageId, providerMessageId: null, segments: null }, intent.id);
          recorded = true;
        },
      },
      smtpFailure: (err) => {
        smtpError = err;
        return err;
      },
    });
    if (result.status === 'already-sent') {
      await recordActionSent(deps.db, a.organization_id, a.id, { messageId: result.messageId, providerMessageId: null, segments: null }, intent.id);
      return { status: 'already-done' };
    }
    return recorded ? { status: 'sent' } : { status: 'unrecorded', messageId: result.messageId, providerMessageId: null, segments: null };
  } catch (err) {
    if (err !== smtpError || !smtpError) throw err;
    const e = smtpError as Error & { responseCode?: number };
    const permanent = (e.responseCode ?? 0) >= 500;
    const error = permanent ? `The mail server refused the email: ${e.message}` : `The mail server could not be reached: ${e.message}`;
    if (permanent || lastPass) {
      await failAction(deps.db, a.organization_id, a.id, error);
      return { status: 'failed' };
    }
    await actions.markMessageError(deps.db, intent.id, error, false);
    return { status: 'retry', error };
  }
}

/** Does one planned task action: the follow-up task (assignee: the action's sender), created once per action. */
export async function doTaskAction(deps: Pick<OutreachDeps, 'db'>, a: actions.ActionRow, asOf: string): Promise<DoOutcome> {
  const docs = await getDocuments(deps.db, a.organization_id, a.invoice_ids);
  const numbers = [...docs.values()].map((d) => d.document_number).sort().join(', ');
  await endAction(deps.db, a.organization_id, a.id, { sent: true }, async (trx) => {
    await insertTask(trx, {
      organization_id: a.organization_id,
      partner_id: a.partner_id,
      business_unit_id: a.business_unit_id,
      action_id: a.id,
      assignee_id: a.sender_user_id,
      title: `Follow up on ${a.invoice_ids.length} invoice(s): ${numbers}`.slice(0, 500),
      invoice_ids: a.invoice_ids,
      due_date: asOf,
    });
  });
  return { status: 'sent' };
}
