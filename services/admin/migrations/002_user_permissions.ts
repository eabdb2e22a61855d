import type { Knex } from 'knex';

export const name = '002_user_permissions';

/**
 * Permissions granted per user (the role model in packages/platform/src/auth/permissions.ts):
 * one row per user and permission. Admins hold every permission implicitly, so rows matter for
 * members only; the gateway's credential resolver reads them into the signed identity.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('user_permissions', (t) => {
    t.uuid('user_id').notNullable().references('id').inTable('users').onDelete('CASCADE');
    t.text('permission').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['user_id', 'permission']);
  });
  await knex.raw(
    `ALTER TABLE user_permissions ADD CONSTRAINT user_permissions_permission_check CHECK (permission IN
       ('payments:write', 'payments:approve', 'erp-postings:write', 'exchange-rates:write', 'adjustments:write'))`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('user_permissions');
}
