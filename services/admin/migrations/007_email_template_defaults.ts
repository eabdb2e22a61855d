import type { Knex } from 'knex';

export const name = '007_email_template_defaults';

/**
 * `email_template_defaults`: admin's published read contract for other services (the kernel's
 * email-templates.ts reads it, nothing else outside admin does): per organization and folder, the
 * folder's default template (cash-app's payment receipt uses the default template of a folder named
 * in its config).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE VIEW email_template_defaults AS
      SELECT f.organization_id, f.id AS folder_id, f.name AS folder_name, f.created_at AS folder_created_at,
             t.id AS template_id, t.subject, t.body
        FROM email_template_folders f
        JOIN email_templates t ON t.folder_id = f.id AND t.is_default`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW email_template_defaults');
}
