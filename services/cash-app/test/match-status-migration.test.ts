/**
 * Cash-app migration 015 on a database that already holds statements and payments: every deposit
 * gets the match status the rule gives (debits none), from the payments and `is_payment` as they are.
 * The rows are written with SQL under migrations 001–014, the state an upgraded installation has;
 * no endpoint can produce a database from before the migration.
 */
import { afterAll, expect, it } from 'vitest';
import { createDb, migrate, newId, type Db } from '@rp/platform';
import { migrations } from '../migrations/index.js';
import { createTestDatabase } from '../../../test/support/stack.js';

let db: Db;

afterAll(async () => {
  await db?.destroy();
});

it('backfills match_status from the payments and is_payment already stored', async () => {
  db = createDb({ url: await createTestDatabase(), schema: 'cash_app', poolMax: 2 });
  await migrate(db, 'cash_app', migrations.filter((m) => m.name < '015'));
  const org = newId();
  const statementId = newId();
  await db('bank_statements').insert({ id: statementId, organization_id: org, format: 'json', status: 'ready' });
  const line = (sequence: number, amount: string, isPayment: boolean | null) => ({
    id: newId(), organization_id: org, statement_id: statementId, unique_import_id: `line-${sequence}`, sequence, amount, currency: 'EUR', is_payment: isPayment,
  });
  const lines = [line(1, '10.00', true), line(2, '20.00', true), line(3, '30.00', true), line(4, '-5.00', false), line(5, '40.00', false), line(6, '50.00', null), line(7, '0.00', false)];
  await db('bank_transactions').insert(lines);
  await db('payments').insert([
    { id: newId(), organization_id: org, bank_transaction_id: lines[0]!.id, status: 'approved', amount: '10.00', currency: 'EUR' },
    { id: newId(), organization_id: org, bank_transaction_id: lines[1]!.id, status: 'unapproved', amount: '20.00', currency: 'EUR' },
  ]);
  await migrate(db, 'cash_app', migrations);
  const rows = (await db('bank_transactions').select('match_status').where({ statement_id: statementId }).orderBy('sequence')) as { match_status: string | null }[];
  expect(rows.map((r) => r.match_status)).toEqual(['approved', 'proposed', 'unmatched', null, 'not_a_payment', 'unmatched', null]);
});
