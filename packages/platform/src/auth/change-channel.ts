import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * A Postgres LISTEN/NOTIFY channel on which writers announce changes of type `C` (on commit), and on
 * which a process sends itself sync markers: a marker heard means every change committed before it
 * was sent has been heard too (Postgres delivers notifications in commit order).
 */
export interface ChangeChannel<C> {
  name: string;
  /** A notification's payload: the change it announces, a sync marker's id, or null when it names no one thing (listeners then drop everything). */
  read(payload: string): { change: C } | { barrier: string } | null;
  /** The payload of the sync marker `id`. */
  marker(id: string): string;
}

/**
 * Sends a sync marker on `channel` and waits until this process's listener hears it. `barriers` is
 * the listener's table of awaited markers (it calls and the caller's listener resolves them). False
 * when the marker was not heard within `timeoutMs` or could not be sent: the caller then empties its cache.
 */
export async function awaitBarrier<C>(db: Knex, channel: ChangeChannel<C>, barriers: Map<string, () => void>, timeoutMs: number): Promise<boolean> {
  const id = randomUUID();
  let timer: NodeJS.Timeout | undefined;
  const heard = new Promise<boolean>((resolve) => {
    barriers.set(id, () => resolve(true));
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    await db.raw('SELECT pg_notify(?, ?)', [channel.name, channel.marker(id)]);
    return await heard;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    barriers.delete(id);
  }
}
