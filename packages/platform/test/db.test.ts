import { describe, expect, it } from 'vitest';
import { createDb, migrate, type Migration } from '@rp/platform';
import { createTestDatabase } from '../../../test/support/stack.js';

describe('migrations', () => {
  it('let an API and a worker that start together migrate the same schema once', async () => {
    const url = await createTestDatabase();
    let ran = 0;
    const migrations: Migration[] = [
      {
        name: '001_widgets',
        up: async (knex) => {
          ran++;
          await knex.schema.createTable('widgets', (t) => {
            t.uuid('id').primary();
            t.decimal('amount', 18, 2).notNullable();
          });
        },
      },
    ];
    const dbs = [1, 2, 3].map(() => createDb({ url, schema: 'race', poolMax: 1 }));
    try {
      const applied = await Promise.all(dbs.map((db) => migrate(db, 'race', migrations)));
      expect(ran).toBe(1);
      expect(applied.flat()).toEqual(['001_widgets']);
      await dbs[0]('widgets').insert({ id: '01938f5e-0000-7000-8000-000000000001', amount: '10.10' });
      // NUMERIC comes back as an exact string, never a float.
      expect(await dbs[1]('widgets').select('amount')).toEqual([{ amount: '10.10' }]);
    } finally {
      await Promise.all(dbs.map((db) => db.destroy()));
    }
  });
});
