/**
 * Follow-up tasks (the engine creates them for task steps, store/collections/tasks.ts insertTask):
 * listing and updating within the caller's business units. A member sees and updates only tasks of
 * customers tied to none of the organization's units or to one of theirs; others are absent (404).
 */
import { NotFoundError, type Db, type Identity } from '@rp/platform';
import * as store from '../../store/collections/tasks.js';

export async function tasksOf({ db }: { db: Db }, identity: Identity, filter: store.TaskFilter, page: { offset: number; pageSize: number }) {
  return store.listTasks(db, identity.org, identity.bu, filter, page.offset, page.pageSize);
}

export async function taskOrThrow({ db }: { db: Db }, identity: Identity, id: string): Promise<store.TaskRow> {
  const row = await store.getTask(db, identity.org, identity.bu, id);
  if (!row) throw new NotFoundError(`No task ${id}.`);
  return row;
}

/** Marks a task done (who and when recorded) or open again, and/or sets its note. */
export async function changeTask({ db }: { db: Db }, identity: Identity, id: string, patch: { status?: 'open' | 'done'; note?: string | null }): Promise<store.TaskRow> {
  const row = await store.updateTask(db, identity.org, identity.bu, id, patch, identity.kind === 'user' ? identity.sub : null);
  if (!row) throw new NotFoundError(`No task ${id}.`);
  return row;
}
