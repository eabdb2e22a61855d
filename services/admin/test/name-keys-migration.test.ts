/**
 * Migration 009 on a database that already holds tags and segments: the normalized name key is computed
 * for every row and names that now clash are kept, the later ones renamed with a numeric suffix, so the
 * unique index can be built without losing a tag, its hand-tagged partners or a segment. SQL set-up: rows
 * written before migration 009 (no endpoint can write a clashing pair any more).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrate, newId, type Db } from '@rp/platform';
import { adminMigrations } from '@rp/admin';
import { createTestDatabase } from '../../../test/support/stack.js';

let db: Db;
const org = newId();
const other = newId();

beforeAll(async () => {
  db = createDb({ url: await createTestDatabase(), schema: 'admin', poolMax: 2 });
  await migrate(db, 'admin', adminMigrations.filter((m) => m.name < '009'));
  await db('organizations').insert([
    { id: org, name: 'Acme', base_currency: 'EUR', timezone: 'UTC' },
    { id: other, name: 'Other', base_currency: 'EUR', timezone: 'UTC' },
  ]);
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
  await db('tags').insert([
    { id: newId(), organization_id: org, name: 'VIP', color: '#000000', created_at: at(1) },
    { id: newId(), organization_id: org, name: 'ＶＩＰ', color: '#000000', created_at: at(2) },
    { id: newId(), organization_id: org, name: 'V\u200bIP', color: '#000000', created_at: at(3) },
    { id: newId(), organization_id: other, name: 'vip\u200e', color: '#000000', created_at: at(4) },
  ]);
  await db('customer_segments').insert([
    { id: newId(), organization_id: org, name: 'Key accounts', priority: 1, conditions: JSON.stringify({ field: 'country', op: 'eq', value: 'DE' }), created_at: at(1) },
    { id: newId(), organization_id: org, name: 'KEY ACCOUNTS', priority: 2, conditions: JSON.stringify({ field: 'country', op: 'eq', value: 'AT' }), created_at: at(2) },
  ]);
  await migrate(db, 'admin', adminMigrations);
});
afterAll(async () => db?.destroy());

describe('migration 009 (name keys)', () => {
  it('keeps every row, renames later clashing names with a suffix and fills the key', async () => {
    const tags = await db('tags').select('organization_id', 'name', 'name_key').orderBy('created_at');
    expect(tags).toEqual([
      { organization_id: org, name: 'VIP', name_key: 'vip' },
      { organization_id: org, name: 'ＶＩＰ (2)', name_key: 'vip (2)' },
      { organization_id: org, name: 'V\u200bIP (3)', name_key: 'vip (3)' },
      { organization_id: other, name: 'vip\u200e', name_key: 'vip' },
    ]);
    const segments = await db('customer_segments').select('name', 'name_key').orderBy('created_at');
    expect(segments).toEqual([
      { name: 'Key accounts', name_key: 'key accounts' },
      { name: 'KEY ACCOUNTS (2)', name_key: 'key accounts (2)' },
    ]);
  });

  it('the unique index refuses a clashing key', async () => {
    await expect(db('tags').insert({ id: newId(), organization_id: org, name: 'vip', name_key: 'vip', color: '#000000' })).rejects.toMatchObject({ code: '23505' });
    await expect(db('customer_segments').insert({ id: newId(), organization_id: org, name: 'x', name_key: 'key accounts', priority: 9, conditions: '{}' })).rejects.toMatchObject({ code: '23505' });
  });
});
