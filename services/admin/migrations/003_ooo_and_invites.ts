import type { Knex } from 'knex';
import { timestamps } from '@rp/platform';

export const name = '003_ooo_and_invites';

/**
 * Out-of-office coverage (spec 2.6) and user invites (row 23).
 *
 * - `user_ooo`: one row per OOO period. `end_date` null = open-ended. Two periods of one user never
 *   overlap: an exclusion constraint over `daterange(start_date, end_date, '[]')` (btree_gist, a
 *   trusted extension, so the schema owner may create it), besides the domain's check under a lock.
 * - `coverage_today`: admin's published read contract for other services (the kernel's
 *   coverage.ts reads it, nothing else outside admin does): per organization and user, the backup
 *   covering them today in the organization's timezone.
 * - `user_invites`: the invite token is stored only as its SHA-256 (`token_hash`); the token itself is
 *   re-derived for the email from a random `token_nonce` and a key of the admin service (HMAC), so it
 *   is neither stored nor in any workflow history. One pending invite per organization and email.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public');

  await knex.schema.createTable('user_ooo', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('backup_user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.uuid('created_by_id').references('id').inTable('users').onDelete('SET NULL');
    t.date('start_date').notNullable();
    t.date('end_date');
    timestamps(t, knex);
    t.index(['organization_id', 'user_id']);
    t.index(['organization_id', 'backup_user_id']);
  });
  await knex.raw(`ALTER TABLE user_ooo ADD CONSTRAINT user_ooo_dates_check CHECK (end_date IS NULL OR start_date <= end_date)`);
  await knex.raw(`ALTER TABLE user_ooo ADD CONSTRAINT user_ooo_not_self_check CHECK (backup_user_id <> user_id)`);
  await knex.raw(
    `ALTER TABLE user_ooo ADD CONSTRAINT user_ooo_no_overlap
       EXCLUDE USING gist (user_id WITH =, daterange(start_date, end_date, '[]') WITH &&)`,
  );

  await knex.raw(`
    CREATE VIEW coverage_today AS
      SELECT o.organization_id, o.user_id, o.backup_user_id, o.id AS ooo_id, o.start_date, o.end_date,
             (now() AT TIME ZONE org.timezone)::date AS today
        FROM user_ooo o
        JOIN organizations org ON org.id = o.organization_id
       WHERE o.start_date <= (now() AT TIME ZONE org.timezone)::date
         AND (o.end_date IS NULL OR o.end_date >= (now() AT TIME ZONE org.timezone)::date)`);

  await knex.schema.createTable('user_invites', (t) => {
    t.uuid('id').primary();
    t.uuid('organization_id').notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.text('email').notNullable();
    t.text('role').notNullable().checkIn(['admin', 'member'], 'user_invites_role_check');
    t.specificType('business_unit_ids', 'uuid[]').notNullable().defaultTo('{}');
    t.text('token_hash').notNullable().unique();
    t.text('token_nonce').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.uuid('invited_by_id').references('id').inTable('users').onDelete('SET NULL');
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_reason').checkIn(['revoked', 'resent'], 'user_invites_revoked_reason_check');
    t.timestamp('accepted_at', { useTz: true });
    t.uuid('accepted_user_id').references('id').inTable('users').onDelete('SET NULL');
    timestamps(t, knex);
    t.index(['organization_id', 'created_at']);
  });
  await knex.raw(
    `CREATE UNIQUE INDEX user_invites_pending_email_uq ON user_invites (organization_id, lower(email))
       WHERE revoked_at IS NULL AND accepted_at IS NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('user_invites');
  await knex.raw('DROP VIEW IF EXISTS coverage_today');
  await knex.schema.dropTableIfExists('user_ooo');
}
