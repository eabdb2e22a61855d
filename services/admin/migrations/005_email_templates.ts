import type { Knex } from 'knex';

export const name = '005_email_templates';

/**
 * Collections outreach (spec 2.5): email template folders, their templates and the templates'
 * attachments (bytes in object storage under `object_key`; see packages/platform/src/storage.ts).
 * At most one default template per folder: a partial unique index backs the domain's rule.
 * SMS templates (spec 2.4): at most one default per organization, likewise.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE email_template_folders (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX email_template_folders_org ON email_template_folders (organization_id, created_at, id);

    CREATE TABLE email_templates (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      folder_id uuid NOT NULL REFERENCES email_template_folders(id) ON DELETE CASCADE,
      name text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      cc jsonb NOT NULL DEFAULT '[]'::jsonb,
      auto_correct boolean NOT NULL DEFAULT false,
      is_default boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX email_templates_folder ON email_templates (folder_id, created_at, id);
    CREATE UNIQUE INDEX email_templates_one_default ON email_templates (folder_id) WHERE is_default;

    CREATE TABLE email_template_attachments (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      template_id uuid NOT NULL REFERENCES email_templates(id) ON DELETE CASCADE,
      user_id uuid,
      name text NOT NULL,
      mime_type text NOT NULL,
      size integer NOT NULL CHECK (size > 0),
      object_key text NOT NULL UNIQUE,
      is_verified boolean NOT NULL DEFAULT false,
      sha256 text,
      sniffed_mime_type text,
      verification_error text,
      verified_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX email_template_attachments_template ON email_template_attachments (template_id, created_at, id);

    CREATE TABLE sms_templates (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
      body text NOT NULL CHECK (char_length(body) BETWEEN 1 AND 1600),
      description text,
      is_default boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX sms_templates_org ON sms_templates (organization_id, created_at, id);
    CREATE UNIQUE INDEX sms_templates_one_default ON sms_templates (organization_id) WHERE is_default;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE sms_templates; DROP TABLE email_template_attachments; DROP TABLE email_templates; DROP TABLE email_template_folders;');
}
