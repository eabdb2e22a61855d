/** SQL of SMS templates (admin schema); every statement is per organization. */
import { newId, type Db } from '@rp/platform';
import type { Knex } from 'knex';

type Q = Db | Knex.Transaction;

export interface SmsTemplateRow {
  id: string;
  organization_id: string;
  name: string;
  body: string;
  description: string | null;
  is_default: boolean;
  created_at: Date;
  modified_at: Date;
}

export type SmsTemplateFields = { name: string; body: string; description: string | null; is_default: boolean };

export async function listSmsTemplates(db: Q, org: string, offset: number, limit: number): Promise<{ rows: SmsTemplateRow[]; total: number }> {
  const [rows, [{ count }]] = await Promise.all([
    db<SmsTemplateRow>('sms_templates').where({ organization_id: org }).orderBy('created_at').orderBy('id').offset(offset).limit(limit),
    db('sms_templates').where({ organization_id: org }).count<{ count: string }[]>({ count: '*' }),
  ]);
  return { rows: rows as SmsTemplateRow[], total: Number(count) };
}

export async function getSmsTemplate(db: Q, org: string, id: string): Promise<SmsTemplateRow | undefined> {
  return db<SmsTemplateRow>('sms_templates').where({ organization_id: org, id }).first() as Promise<SmsTemplateRow | undefined>;
}

/** Serialize default changes of one organization (the organization row is the lock). */
export async function lockOrganization(trx: Knex.Transaction, org: string): Promise<void> {
  await trx('organizations').select('id').where({ id: org }).forUpdate().first();
}

export async function clearSmsDefault(db: Q, org: string, exceptId: string | null): Promise<void> {
  const q = db('sms_templates').where({ organization_id: org, is_default: true });
  if (exceptId) q.whereNot({ id: exceptId });
  await q.update({ is_default: false, modified_at: db.fn.now() });
}

export async function insertSmsTemplate(db: Q, org: string, t: SmsTemplateFields): Promise<SmsTemplateRow> {
  const [row] = await db('sms_templates').insert({ id: newId(), organization_id: org, ...t }).returning('*');
  return row as SmsTemplateRow;
}

export async function updateSmsTemplate(db: Q, org: string, id: string, patch: Partial<SmsTemplateFields>): Promise<SmsTemplateRow | undefined> {
  const [row] = await db('sms_templates')
    .where({ organization_id: org, id })
    .update({ ...patch, modified_at: db.fn.now() })
    .returning('*');
  return row as SmsTemplateRow | undefined;
}

export async function deleteSmsTemplate(db: Q, org: string, id: string): Promise<number> {
  return db('sms_templates').where({ organization_id: org, id }).delete();
}
