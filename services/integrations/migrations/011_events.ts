import type { Knex } from 'knex';
import { createEventsTable, dropEventsTable } from '@rp/platform';

export const name = '011_events';

/** The service's events (transactional outbox): see the kernel's events/table.ts. */
export async function up(knex: Knex): Promise<void> {
  await createEventsTable(knex);
}

export async function down(knex: Knex): Promise<void> {
  await dropEventsTable(knex);
}
