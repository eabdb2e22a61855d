import type { Knex } from 'knex';

export const name = '008_report_configs';

/**
 * Scheduled reports (spec 2.3):
 * - `report_configs`: one per report type per organization (unique index: two concurrent creates give one
 *   row and one 409). `last_sent_at` is written by the platform only (the report workflow, after a send).
 *   Each config is a Temporal Schedule `report-<organization id>-<report type>`.
 * - `report_runs`: one per scheduled time of a config (`idempotency_key` = `schedule:<config id>:<scheduled
 *   time ISO>`) or per send-now request (`manual:<run id>`): a retried or re-delivered Schedule action finds
 *   its run again instead of making a second one.
 * - `report_emails`: the run's email intent, written before the SMTP call (recipients, subject; its id makes
 *   the Message-ID) and its outcome after it (status `sent`, the accepted Message-ID, attempts, last error).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE report_configs (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      report_type text NOT NULL CHECK (report_type IN ('integration_sync_report', 'ar_aging_report')),
      frequency text NOT NULL CHECK (frequency IN ('daily', 'weekly', 'monthly')),
      time text NOT NULL CHECK (time ~ '^([01][0-9]|2[0-3]):(00|30)$'),
      weekday smallint CHECK (weekday BETWEEN 0 AND 6),
      recipient_emails text[] NOT NULL CHECK (cardinality(recipient_emails) >= 1),
      cc_emails text[] NOT NULL DEFAULT '{}',
      is_enabled boolean NOT NULL DEFAULT true,
      last_sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT report_configs_weekday_ck CHECK ((frequency = 'weekly') = (weekday IS NOT NULL)),
      CONSTRAINT report_configs_recipients_ck CHECK (cardinality(recipient_emails) + cardinality(cc_emails) <= 50)
    );
    CREATE UNIQUE INDEX report_configs_org_type_uq ON report_configs (organization_id, report_type);

    CREATE TABLE report_runs (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      config_id uuid NOT NULL REFERENCES report_configs (id) ON DELETE CASCADE,
      report_type text NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
      idempotency_key text NOT NULL UNIQUE,
      scheduled_for timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'sent', 'failed')),
      as_of_date date,
      period_start timestamptz,
      period_end timestamptz,
      row_count integer,
      counts jsonb,
      delivery jsonb,
      error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX report_runs_config_idx ON report_runs (config_id, scheduled_for DESC, id DESC);

    CREATE TABLE report_emails (
      id uuid PRIMARY KEY,
      run_id uuid NOT NULL UNIQUE REFERENCES report_runs (id) ON DELETE CASCADE,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      to_addresses text[] NOT NULL,
      cc_addresses text[] NOT NULL,
      subject text NOT NULL,
      status text NOT NULL CHECK (status IN ('sending', 'sent')),
      message_id text,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS report_emails, report_runs, report_configs');
}
