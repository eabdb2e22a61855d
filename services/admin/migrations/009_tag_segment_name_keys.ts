import type { Knex } from 'knex';
import { nameKey } from '../src/domain/collections/names.js';

export const name = '009_tag_segment_name_keys';

/**
 * Tag and customer-segment names are unique per organization by their normalized key (nameKey: NFKC,
 * case folding, invisible characters and bidirectional marks removed), enforced by a unique index so
 * two concurrent writes of look-alike names give one row and one 409.
 *
 * Existing rows get their key computed here (in Node, by the same function the service writes with).
 * Existing names that clash under the new rule are kept, not deleted: the oldest keeps its name and each
 * later one is renamed with a numeric suffix (" (2)", " (3)", …) until its key is free, so no tag, hand
 * tagging or segment is lost and an admin can rename them afterwards.
 */
export async function up(knex: Knex): Promise<void> {
  for (const table of ['tags', 'customer_segments'] as const) {
    await knex.raw(`ALTER TABLE ${table} ADD COLUMN name_key text`);
    const rows = (await knex(table).select('id', 'organization_id', 'name').orderBy([{ column: 'created_at' }, { column: 'id' }])) as {
      id: string;
      organization_id: string;
      name: string;
    }[];
    const taken = new Set<string>();
    for (const row of rows) {
      let newName = row.name;
      let key = nameKey(newName) || row.id;
      for (let n = 2; taken.has(`${row.organization_id}:${key}`); n++) {
        newName = `${row.name} (${n})`;
        key = nameKey(newName);
      }
      taken.add(`${row.organization_id}:${key}`);
      await knex(table).where({ id: row.id }).update({ name: newName, name_key: key });
    }
    await knex.raw(`ALTER TABLE ${table} ALTER COLUMN name_key SET NOT NULL`);
    await knex.raw(`CREATE UNIQUE INDEX ${table}_org_name_key_uq ON ${table} (organization_id, name_key)`);
  }
  await knex.raw('DROP INDEX tags_org_name_uq');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE UNIQUE INDEX IF NOT EXISTS tags_org_name_uq ON tags (organization_id, lower(name))');
  await knex.raw('ALTER TABLE tags DROP COLUMN IF EXISTS name_key');
  await knex.raw('ALTER TABLE customer_segments DROP COLUMN IF EXISTS name_key');
}
