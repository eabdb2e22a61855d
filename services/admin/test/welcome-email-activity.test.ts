import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDb, createLogger, migrate, newId, type Db, type Mailer } from '@rp/platform';
import { adminMigrations } from '@rp/admin';
import { RECORDED_EMAIL_KIND_NOT_SERVED, recordedEmailActivities } from '@rp/workflows';
import { createWelcomeEmailActivities, welcomeEmailHandler } from '../src/activities/welcome-email.js';
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

  it('in three steps: the intent before the send, "sent" written at once after the SMTP server accepted (best effort) and recorded for sure on its own', async () => {
    const user = newId();
    await db('users').insert({ id: user, organization_id: orgId, email: 'three@acme.example', name: 'Tess', role: 'member' });
    const mailer = recordingMailer();
    const acts = createWelcomeEmailActivities({ db, mailer, log: createLogger('t', 'silent'), from: 'Platform <a@b.example>', publicBaseUrl: 'http://x' });
    const env = new MockActivityEnvironment();
    const input = { organizationId: orgId, userId: user };

    const prepared = await env.run(acts.prepareWelcomeEmail, input);
    expect(prepared).toMatchObject({ status: 'ready', emailId: expect.any(String) });
    const emailId = (prepared as { emailId: string }).emailId;
    expect(await db('outbound_emails').where({ id: emailId }).first()).toMatchObject({ status: 'sending', attempts: 0, idempotency_key: `welcome-${user}` });

    const delivered = await env.run(acts.deliverWelcomeEmail, { ...input, emailId });
    expect(delivered).toEqual({ status: 'delivered', emailId, messageId: '<m1@test>' });
    expect(mailer.sent[0]).toMatchObject({ to: 'three@acme.example', messageId: `<${emailId}@b.example>` });
    // the send activity counted the attempt before the call and wrote "sent" at once after the acceptance (the
    // kernel's recorded send): a worker lost before reporting finds it sent on retry instead of sending again
    expect(await db('outbound_emails').where({ id: emailId }).first()).toMatchObject({ status: 'sent', attempts: 1, message_id: '<m1@test>' });
    expect(await env.run(acts.deliverWelcomeEmail, { ...input, emailId })).toEqual({ status: 'already-sent', emailId, messageId: '<m1@test>' });
    expect(mailer.sent).toHaveLength(1);

    await env.run(acts.recordWelcomeEmailSent, { organizationId: orgId, emailId, messageId: '<m1@test>' });
    await env.run(acts.recordWelcomeEmailSent, { organizationId: orgId, emailId, messageId: '<m1@test>' }); // a retried record is harmless
    expect(await db('outbound_emails').where({ id: emailId }).first()).toMatchObject({ status: 'sent', attempts: 1, message_id: '<m1@test>' });
    expect(await env.run(acts.deliverWelcomeEmail, { ...input, emailId })).toEqual({ status: 'already-sent', emailId, messageId: '<m1@test>' });
    expect(await env.run(acts.prepareWelcomeEmail, input)).toEqual({ status: 'already-sent', emailId, messageId: '<m1@test>' });
    expect(mailer.sent).toHaveLength(1);
  });

  it('single-activity flow (workflows started before the split): a failed "sent" write does not fail the send', async () => {
    const user = newId();
    await db('users').insert({ id: user, organization_id: orgId, email: 'legacy@acme.example', name: 'Lee', role: 'member' });
    // the database refuses every "sent" update of this row
    await db.raw(`CREATE FUNCTION admin.refuse_sent() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.status = 'sent' AND NEW.to_address = 'legacy@acme.example' THEN RAISE EXCEPTION 'injected'; END IF; RETURN NEW; END $$`);
    await db.raw('CREATE TRIGGER refuse_sent BEFORE UPDATE ON admin.outbound_emails FOR EACH ROW EXECUTE FUNCTION admin.refuse_sent()');
    try {
      const mailer = recordingMailer();
      const acts = createWelcomeEmailActivities({ db, mailer, log: createLogger('t', 'silent'), from: 'a@b.example', publicBaseUrl: 'http://x' });
      expect(await new MockActivityEnvironment().run(acts.sendWelcomeEmail, { organizationId: orgId, userId: user })).toMatchObject({ status: 'sent', messageId: '<m1@test>' });
      expect(mailer.sent).toHaveLength(1);
    } finally {
      await db.raw('DROP TRIGGER refuse_sent ON admin.outbound_emails');
    }
  });

  it('through the recorded-email family (kind welcome): the same row as the names of earlier workflows, so either finds the other\'s send; another kind is refused unsent', async () => {
    const user = newId();
    await db('users').insert({ id: user, organization_id: orgId, email: 'family@acme.example', name: 'Fay', role: 'member' });
    const mailer = recordingMailer();
    const deps = { db, mailer, log: createLogger('t', 'silent'), from: 'Platform <a@b.example>', publicBaseUrl: 'http://x' };
    const family = recordedEmailActivities({ welcome: welcomeEmailHandler(deps) });
    const legacy = createWelcomeEmailActivities(deps);
    const env = new MockActivityEnvironment();
    const input = { organizationId: orgId, userId: user };

    const prepared = await env.run(family.prepareRecordedEmail, { kind: 'welcome' as const, input });
    expect(prepared).toMatchObject({ status: 'ready', emailId: expect.any(String) });
    const emailId = (prepared as { emailId: string }).emailId;
    expect(await env.run(family.deliverRecordedEmail, { kind: 'welcome' as const, input, emailId })).toEqual({ status: 'delivered', emailId, messageId: '<m1@test>' });
    await env.run(family.recordRecordedEmailSent, { kind: 'welcome' as const, organizationId: orgId, emailId, messageId: '<m1@test>' });
    expect(await db('outbound_emails').where({ id: emailId }).first()).toMatchObject({ status: 'sent', attempts: 1, idempotency_key: `welcome-${user}` });
    expect(await env.run(legacy.prepareWelcomeEmail, input)).toEqual({ status: 'already-sent', emailId, messageId: '<m1@test>' });
    expect(await env.run(legacy.sendWelcomeEmail, input)).toEqual({ status: 'already-sent', emailId, messageId: '<m1@test>' });

    const refused = await env.run(family.prepareRecordedEmail, { kind: 'invite' as const, input }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ type: RECORDED_EMAIL_KIND_NOT_SERVED, nonRetryable: true });
    expect(mailer.sent).toHaveLength(1);
  });
});
