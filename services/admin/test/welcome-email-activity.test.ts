import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDb, createLogger, migrate, newId, type Db, type Mailer } from '@rp/platform';
import { adminMigrations } from '@rp/admin';
import { createWelcomeEmailActivities } from '../src/activities/welcome-email.js';
import { createTestDatabase } from '../../../test/support/stack.js';

let db: Db;
const orgId = newId();
const userId = newId();

beforeAll(async () => {
  db = createDb({ url: await createTestDatabase(), schema: 'admin', poolMax: 2 });
  await migrate(db, 'admin', adminMigrations);
  await db('organizations').insert({ id: orgId, name: 'Acme', base_currency: 'USD', timezone: 'UTC' });
  await db('users').insert({ id: userId, organization_id: orgId, email: 'u@acme.example', name: 'Una', role: 'member' });
});
afterAll(async () => db?.destroy());

function recordingMailer(fail = false): Mailer & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    async send(m) {
      if (fail) throw new Error('SMTP 421 try later');
      sent.push(m);
      return { messageId: `<m${sent.length}@test>` };
    },
    close() {},
  };
}

describe('sendWelcomeEmail activity', () => {
  it('records a failed attempt and rethrows so Temporal retries', async () => {
    const acts = createWelcomeEmailActivities({ db, mailer: recordingMailer(true), log: createLogger('t', 'silent'), from: 'a@b.example', publicBaseUrl: 'http://x' });
    await expect(new MockActivityEnvironment().run(acts.sendWelcomeEmail, { organizationId: orgId, userId })).rejects.toThrow(/SMTP 421/);
    const row = await db('outbound_emails').where({ idempotency_key: `welcome-${userId}` }).first();
    expect(row).toMatchObject({ status: 'sending', attempts: 1, last_error: 'SMTP 421 try later' });
  });

  it('sends on retry, then never again for the same user', async () => {
    const mailer = recordingMailer();
    const acts = createWelcomeEmailActivities({ db, mailer, log: createLogger('t', 'silent'), from: 'Platform <a@b.example>', publicBaseUrl: 'http://x' });
    const env = new MockActivityEnvironment();
    const first = await env.run(acts.sendWelcomeEmail, { organizationId: orgId, userId });
    expect(first).toMatchObject({ status: 'sent', messageId: '<m1@test>' });
    const second = await env.run(acts.sendWelcomeEmail, { organizationId: orgId, userId });
    expect(second).toMatchObject({ status: 'already-sent', messageId: '<m1@test>' });
    expect(mailer.sent).toHaveLength(1);
    expect(mailer.sent[0]).toMatchObject({ to: 'u@acme.example', messageId: expect.stringMatching(/@b\.example>$/) });
  });

  it('waits for an uncommitted user on early attempts, then skips', async () => {
    const acts = createWelcomeEmailActivities({ db, mailer: recordingMailer(), log: createLogger('t', 'silent'), from: 'a@b.example', publicBaseUrl: 'http://x' });
    const missing = { organizationId: orgId, userId: newId() };
    await expect(new MockActivityEnvironment({ attempt: 1 }).run(acts.sendWelcomeEmail, missing)).rejects.toThrow(/not visible yet/);
    expect(await new MockActivityEnvironment({ attempt: 4 }).run(acts.sendWelcomeEmail, missing)).toEqual({ status: 'skipped', reason: 'user does not exist' });
  });
});
