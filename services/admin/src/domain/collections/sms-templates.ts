/**
 * SMS templates (spec 2.4, endpoint row 5). Bodies are Liquid, validated like email templates
 * (liquid.ts). `character_count` and `estimated_segment_count` come from the kernel's smsMetrics
 * (sms-segments-calculator, the same count the collections engine's texts use) on
 * the body as written, before variable substitution: GSM-7 allows 160 septets in a single segment and
 * 153 per part of a longer message, extension characters (€ [ ] { } \ ^ ~ | and form feed) take two
 * septets; one character outside GSM-7 switches the whole message to UCS-2 (70 / 67 per segment).
 * `character_count` is what the carrier counts: septets under GSM-7, UTF-16 code units under UCS-2.
 * At most one default per organization (set under a lock of the organization row; a partial unique
 * index backs it).
 */
import { NotFoundError, type Db, type Identity, type TemplatePool } from '@rp/platform';
import * as store from '../../store/collections/sms-templates.js';
import { checkTemplate } from './liquid.js';
import { samplesFor } from './email-templates.js';
import { refusedWhileUsedByPolicy } from './policies.js';

export { smsMetrics } from '@rp/platform';

interface Deps {
  db: Db;
  templates: TemplatePool;
}

async function checkBody(deps: Deps, identity: Identity, body: string): Promise<void> {
  await checkTemplate(deps.templates, 'body', body, false, await samplesFor(deps, identity));
}

export async function listSmsTemplates(deps: Deps, org: string, page: { offset: number; pageSize: number }) {
  return store.listSmsTemplates(deps.db, org, page.offset, page.pageSize);
}

export async function getSmsTemplate(deps: Deps, org: string, id: string) {
  const row = await store.getSmsTemplate(deps.db, org, id);
  if (!row) throw new NotFoundError(`No SMS template ${id}.`);
  return row;
}

export async function createSmsTemplate(deps: Deps, identity: Identity, input: store.SmsTemplateFields) {
  await checkBody(deps, identity, input.body);
  return deps.db.transaction(async (trx) => {
    if (input.is_default) {
      await store.lockOrganization(trx, identity.org);
      await store.clearSmsDefault(trx, identity.org, null);
    }
    return store.insertSmsTemplate(trx, identity.org, input);
  });
}

/** Only the fields present change (row 5). */
export async function updateSmsTemplate(deps: Deps, identity: Identity, id: string, patch: Partial<store.SmsTemplateFields>) {
  if (patch.body !== undefined) await checkBody(deps, identity, patch.body);
  return deps.db.transaction(async (trx) => {
    if (patch.is_default) {
      await store.lockOrganization(trx, identity.org);
      await store.clearSmsDefault(trx, identity.org, id);
    }
    const updated = await store.updateSmsTemplate(trx, identity.org, id, patch);
    // Inside the transaction: an unknown id rolls back the cleared default too.
    if (!updated) throw new NotFoundError(`No SMS template ${id}.`);
    return updated;
  });
}

/** Deletes an SMS template; one a collection policy step sends is refused (409 naming the policy). */
export async function deleteSmsTemplate(deps: Deps, org: string, id: string): Promise<void> {
  const deleted = await refusedWhileUsedByPolicy(deps.db, org, `SMS template ${id}`, async () => ({ sms: [id] }), () => store.deleteSmsTemplate(deps.db, org, id));
  if (!deleted) throw new NotFoundError(`No SMS template ${id}.`);
}
