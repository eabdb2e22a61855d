/** SQL of collection tasks (admin schema, migration 012): follow-ups for people. */
import { newId } from '@rp/platform';
import type { Knex } from 'knex';

export interface TaskRow {
  id: string;
  organization_id: string;
  partner_id: string;
  business_unit_id: string | null;
  action_id: string | null;
  assignee_id: string | null;
  title: string;
  invoice_ids: string[];
  status: 'open' | 'done';
  note: string | null;
  due_date: string | null;
  completed_at: Date | null;
  completed_by: string | null;
  created_at: Date;
  modified_at: Date;
}

/** Inserts a task; a task of an action is created once (action_id is unique): the existing one is answered. */
export async function insertTask(
  trx: Knex | Knex.Transaction,
  t: { organization_id: string; partner_id: string; business_unit_id: string | null; action_id: string | null; assignee_id: string | null; title: string; invoice_ids: string[]; due_date: string | null },
): Promise<TaskRow> {
  const q = trx('collection_tasks').insert({ id: newId(), ...t });
  const [row] = (t.action_id ? await q.onConflict('action_id').ignore().returning('*') : await q.returning('*')) as TaskRow[];
  return row ?? ((await trx('collection_tasks').where({ action_id: t.action_id }).first()) as TaskRow);
}
