import type { Knex } from 'knex';

export const name = '012_collections_engine';

/**
 * The collections engine (DESIGN §10 "Outreach"): policies of steps, daily runs, the actions they
 * plan and do, the messages they send, follow-up tasks, promises to pay and disputes.
 *
 * - `organizations.collections_run_time`: local time (HH:MM, the organization's timezone) of the
 *   daily run's Schedule.
 * - `collection_policies` / `collection_policy_steps`: a policy applies to the customers of one
 *   segment, or (segment_id null) to customers in no segment with a policy: at most one default per
 *   organization, one policy per segment. A segment, an email template or an SMS template a policy
 *   uses cannot be deleted (RESTRICT; the API answers 409). Steps are kept in offset order,
 *   `step_index` 0-based, offsets unique per policy.
 * - `collection_runs`: one evaluation of every customer's open invoices as of `as_of_date`. A dry run
 *   plans without doing (its actions stay `planned` for ever and take no marks).
 * - `collection_actions`: what a run decided for one customer at one step (all its invoices due at
 *   that step grouped), `planned` → `sent` | `failed`, or `skipped` with the reason.
 * - `collection_step_marks`: the exactly-once guard. A real run takes the mark of every
 *   (policy, invoice, step offset) an action covers in the same transaction that creates the action;
 *   a second run, a retry or a re-run of the day cannot take it again (primary key). Steps are
 *   identified by their offset, so editing a policy's steps keeps each invoice's progress. A failed
 *   action releases its marks in the transaction that records the failure (the next run retries).
 * - `collection_messages`: the email or SMS of an action: the intent, written before the transport
 *   is called, and its result after (the Message-ID or the provider's message id).
 * - `collection_tasks`: follow-ups for people (a task step, or created by hand later).
 * - `promises_to_pay` / `disputes`: while open they stop chasing of their invoices. One open dispute
 *   per invoice (partial unique index).
 * Partners and invoices live in integrations' schema: their ids here are references checked on
 * write, not foreign keys; `business_unit_id` is the partner's, copied for business-unit scope.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE organizations
      ADD COLUMN collections_run_time text NOT NULL DEFAULT '08:00'
        CONSTRAINT organizations_collections_run_time_check CHECK (collections_run_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$');

    CREATE TABLE collection_policies (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 256),
      description text,
      segment_id uuid REFERENCES customer_segments (id) ON DELETE RESTRICT,
      is_enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX collection_policies_org_idx ON collection_policies (organization_id, created_at, id);
    CREATE UNIQUE INDEX collection_policies_one_default ON collection_policies (organization_id) WHERE segment_id IS NULL;
    CREATE UNIQUE INDEX collection_policies_one_per_segment ON collection_policies (segment_id) WHERE segment_id IS NOT NULL;

    CREATE TABLE collection_policy_steps (
      policy_id uuid NOT NULL REFERENCES collection_policies (id) ON DELETE CASCADE,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      step_index integer NOT NULL CHECK (step_index BETWEEN 0 AND 11),
      offset_days integer NOT NULL CHECK (offset_days BETWEEN -60 AND 365),
      channel text NOT NULL CHECK (channel IN ('email', 'sms', 'task')),
      email_template_id uuid REFERENCES email_templates (id) ON DELETE RESTRICT,
      sms_template_id uuid REFERENCES sms_templates (id) ON DELETE RESTRICT,
      min_overdue_lc numeric(20, 2) CHECK (min_overdue_lc >= 0),
      PRIMARY KEY (policy_id, step_index),
      CONSTRAINT collection_policy_steps_offset_uq UNIQUE (policy_id, offset_days),
      CONSTRAINT collection_policy_steps_email_template CHECK ((channel = 'email') = (email_template_id IS NOT NULL)),
      CONSTRAINT collection_policy_steps_sms_template CHECK ((channel = 'sms') = (sms_template_id IS NOT NULL))
    );
    CREATE INDEX collection_policy_steps_email_template_idx ON collection_policy_steps (email_template_id) WHERE email_template_id IS NOT NULL;
    CREATE INDEX collection_policy_steps_sms_template_idx ON collection_policy_steps (sms_template_id) WHERE sms_template_id IS NOT NULL;

    CREATE TABLE collection_runs (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      as_of_date date NOT NULL,
      dry_run boolean NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('schedule', 'api')),
      requested_by uuid,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed')),
      error text,
      started_at timestamptz NOT NULL DEFAULT now(),
      completed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT collection_runs_completed_check CHECK ((status = 'running') = (completed_at IS NULL))
    );
    CREATE INDEX collection_runs_org_idx ON collection_runs (organization_id, started_at DESC, id DESC);

    CREATE TABLE collection_actions (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      run_id uuid NOT NULL REFERENCES collection_runs (id) ON DELETE CASCADE,
      partner_id uuid NOT NULL,
      business_unit_id uuid,
      policy_id uuid REFERENCES collection_policies (id) ON DELETE SET NULL,
      step_index integer NOT NULL CHECK (step_index BETWEEN 0 AND 11),
      offset_days integer NOT NULL,
      channel text NOT NULL CHECK (channel IN ('email', 'sms', 'task')),
      invoice_ids uuid[] NOT NULL CHECK (cardinality(invoice_ids) > 0),
      status text NOT NULL CHECK (status IN ('planned', 'sent', 'skipped', 'failed')),
      skip_reason text,
      sender_user_id uuid,
      error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT collection_actions_skip_reason_check CHECK ((status = 'skipped') = (skip_reason IS NOT NULL)),
      CONSTRAINT collection_actions_sent_check CHECK ((status = 'sent') = (sent_at IS NOT NULL))
    );
    CREATE INDEX collection_actions_run_idx ON collection_actions (run_id, status, id);
    CREATE INDEX collection_actions_org_idx ON collection_actions (organization_id, created_at DESC, id DESC);
    CREATE INDEX collection_actions_partner_idx ON collection_actions (organization_id, partner_id, created_at DESC);

    CREATE TABLE collection_step_marks (
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      policy_id uuid NOT NULL REFERENCES collection_policies (id) ON DELETE CASCADE,
      invoice_id uuid NOT NULL,
      offset_days integer NOT NULL,
      action_id uuid NOT NULL REFERENCES collection_actions (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (policy_id, invoice_id, offset_days)
    );
    CREATE INDEX collection_step_marks_action_idx ON collection_step_marks (action_id);

    CREATE TABLE collection_messages (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      action_id uuid NOT NULL UNIQUE REFERENCES collection_actions (id) ON DELETE CASCADE,
      partner_id uuid NOT NULL,
      business_unit_id uuid,
      channel text NOT NULL CHECK (channel IN ('email', 'sms')),
      to_address text NOT NULL,
      from_address text NOT NULL,
      reply_to text,
      subject text,
      body text NOT NULL,
      segments integer,
      status text NOT NULL DEFAULT 'sending' CHECK (status IN ('sending', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      message_id text,
      provider_message_id text,
      error text,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX collection_messages_partner_idx ON collection_messages (organization_id, partner_id, created_at DESC);
    CREATE INDEX collection_messages_message_id_idx ON collection_messages (message_id) WHERE message_id IS NOT NULL;

    CREATE TABLE collection_tasks (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      partner_id uuid NOT NULL,
      business_unit_id uuid,
      action_id uuid UNIQUE REFERENCES collection_actions (id) ON DELETE SET NULL,
      assignee_id uuid REFERENCES users (id) ON DELETE SET NULL,
      title text NOT NULL,
      invoice_ids uuid[] NOT NULL DEFAULT '{}',
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'done')),
      note text,
      due_date date,
      completed_at timestamptz,
      completed_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT collection_tasks_done_check CHECK ((status = 'done') = (completed_at IS NOT NULL))
    );
    CREATE INDEX collection_tasks_org_idx ON collection_tasks (organization_id, created_at DESC, id DESC);
    CREATE INDEX collection_tasks_assignee_idx ON collection_tasks (organization_id, assignee_id, status);
    CREATE INDEX collection_tasks_partner_idx ON collection_tasks (organization_id, partner_id, created_at DESC);

    CREATE TABLE promises_to_pay (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      partner_id uuid NOT NULL,
      business_unit_id uuid,
      invoice_ids uuid[] NOT NULL CHECK (cardinality(invoice_ids) BETWEEN 1 AND 100),
      amount numeric(20, 4) NOT NULL CHECK (amount > 0),
      currency char(3) NOT NULL,
      promised_date date NOT NULL,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'kept', 'broken', 'cancelled')),
      -- each invoice's open amount when the promise was made ({invoice id: decimal text}): what ledger closings reduce
      open_amounts_at_creation jsonb NOT NULL DEFAULT '{}'::jsonb,
      covered_amount numeric(20, 4),
      note text,
      created_by uuid,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT promises_to_pay_resolved_check CHECK ((status = 'open') = (resolved_at IS NULL))
    );
    CREATE INDEX promises_to_pay_org_idx ON promises_to_pay (organization_id, created_at DESC, id DESC);
    CREATE INDEX promises_to_pay_partner_idx ON promises_to_pay (organization_id, partner_id, status);
    CREATE INDEX promises_to_pay_open_invoices_idx ON promises_to_pay USING gin (invoice_ids) WHERE status = 'open';

    CREATE TABLE disputes (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      invoice_id uuid NOT NULL,
      partner_id uuid NOT NULL,
      business_unit_id uuid,
      reason_code text NOT NULL CHECK (reason_code IN ('pricing', 'quantity', 'quality', 'damaged', 'not_received', 'duplicate_billing', 'tax', 'other')),
      amount numeric(20, 4) CHECK (amount > 0),
      currency char(3) NOT NULL,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'rejected')),
      resolution text,
      note text,
      created_by uuid,
      resolved_by uuid,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT disputes_resolved_check CHECK ((status = 'open') = (resolved_at IS NULL))
    );
    CREATE UNIQUE INDEX disputes_one_open_per_invoice ON disputes (invoice_id) WHERE status = 'open';
    CREATE INDEX disputes_org_idx ON disputes (organization_id, created_at DESC, id DESC);
    CREATE INDEX disputes_partner_idx ON disputes (organization_id, partner_id, status);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE IF EXISTS disputes, promises_to_pay, collection_tasks, collection_messages, collection_step_marks,
      collection_actions, collection_runs, collection_policy_steps, collection_policies;
    ALTER TABLE organizations DROP COLUMN IF EXISTS collections_run_time;
  `);
}
