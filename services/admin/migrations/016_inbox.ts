import type { Knex } from 'knex';

export const name = '016_inbox';

/**
 * The AR inbox: mail received for an organization (SMTP on its inbound host, or the provider
 * endpoint POST /v2/inbound/email/{organization_id}) and what it led to.
 *
 * - `organizations.inbound_secret_hash`: the provider endpoint's per-organization secret, stored as
 *   a SHA-256 hash (shown once when rotated, never readable again).
 * - `inbox_messages`: one row per distinct Message-ID per organization (a message without one is
 *   keyed by `<sha256 of its bytes>@inbound.invalid`), created when the raw message is already in
 *   object storage (`raw_object_key`), so nothing accepted is lost. `processing_state` follows the
 *   inbox workflow (received → processed | failed); `status` is the collectors' (unassigned,
 *   assigned, archived). `business_unit_id` is the matched customer's, copied for scope.
 * - `inbox_attachments`: each attachment stored as its own object (presigned on read).
 * - `inbox_known_contacts`: sender addresses known to belong to a customer (a manual correction
 *   teaches it); one customer per address.
 * - `email_bounces`: recipient addresses a delivery-status notification reported as failed; the
 *   collections engine does not email them.
 * - `inbound_refusals`: mail refused for its size or attachment count (SMTP 552 / HTTP 413), kept
 *   as a record without its content.
 * - promises to pay and disputes read from a message name it as their source.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE organizations
      ADD COLUMN inbound_secret_hash bytea,
      ADD COLUMN inbound_secret_rotated_at timestamptz;

    CREATE TABLE inbox_messages (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      message_id text NOT NULL,
      thread_id text NOT NULL,
      transport text NOT NULL CHECK (transport IN ('smtp', 'http')),
      envelope_from text,
      envelope_to text[] NOT NULL DEFAULT '{}',
      raw_object_key text NOT NULL,
      raw_size integer NOT NULL CHECK (raw_size >= 0),
      raw_sha256 text NOT NULL,
      in_reply_to_header text,
      references_header text[] NOT NULL DEFAULT '{}',
      from_address text,
      from_name text,
      to_addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
      cc_addresses jsonb NOT NULL DEFAULT '[]'::jsonb,
      subject text,
      sent_at timestamptz,
      received_at timestamptz NOT NULL DEFAULT now(),
      text_body text,
      processing_state text NOT NULL DEFAULT 'received' CHECK (processing_state IN ('received', 'processed', 'failed')),
      processing_error text,
      unsupported jsonb NOT NULL DEFAULT '[]'::jsonb,
      partner_id uuid,
      business_unit_id uuid,
      match_confidence smallint CHECK (match_confidence BETWEEN 0 AND 100),
      match_reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
      assignee_id uuid,
      category text CHECK (category IN ('remittance', 'promise_to_pay', 'dispute', 'question', 'auto_reply', 'bounce', 'other')),
      category_confidence smallint CHECK (category_confidence BETWEEN 0 AND 100),
      category_reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
      in_reply_to_object text,
      in_reply_to_id uuid,
      status text NOT NULL DEFAULT 'unassigned' CHECK (status IN ('unassigned', 'assigned', 'archived')),
      suggestions jsonb NOT NULL DEFAULT '[]'::jsonb,
      results jsonb NOT NULL DEFAULT '[]'::jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT inbox_messages_message_id_uq UNIQUE (organization_id, message_id),
      CONSTRAINT inbox_messages_reply_ref_check CHECK ((in_reply_to_object IS NULL) = (in_reply_to_id IS NULL))
    );
    CREATE INDEX inbox_messages_org_idx ON inbox_messages (organization_id, received_at DESC, id DESC);
    CREATE INDEX inbox_messages_status_idx ON inbox_messages (organization_id, status, received_at DESC);
    CREATE INDEX inbox_messages_partner_idx ON inbox_messages (organization_id, partner_id, received_at DESC) WHERE partner_id IS NOT NULL;
    CREATE INDEX inbox_messages_assignee_idx ON inbox_messages (organization_id, assignee_id, received_at DESC) WHERE assignee_id IS NOT NULL;
    CREATE INDEX inbox_messages_thread_idx ON inbox_messages (organization_id, thread_id);

    CREATE TABLE inbox_attachments (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      inbox_message_id uuid NOT NULL REFERENCES inbox_messages (id) ON DELETE CASCADE,
      position smallint NOT NULL,
      name text NOT NULL,
      mime_type text NOT NULL,
      size integer NOT NULL CHECK (size >= 0),
      object_key text NOT NULL,
      content_id text,
      disposition text,
      sha256 text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT inbox_attachments_position_uq UNIQUE (inbox_message_id, position)
    );
    CREATE INDEX inbox_attachments_org_idx ON inbox_attachments (organization_id, inbox_message_id);

    CREATE TABLE inbox_known_contacts (
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      address text NOT NULL CHECK (address = lower(address)),
      partner_id uuid NOT NULL,
      source text NOT NULL CHECK (source IN ('manual', 'reply')),
      created_by uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, address)
    );
    CREATE INDEX inbox_known_contacts_partner_idx ON inbox_known_contacts (organization_id, partner_id);

    CREATE TABLE email_bounces (
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      address text NOT NULL CHECK (address = lower(address)),
      partner_id uuid,
      inbox_message_id uuid REFERENCES inbox_messages (id) ON DELETE SET NULL,
      status_code text,
      diagnostic text,
      bounced_at timestamptz NOT NULL DEFAULT now(),
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, address)
    );

    CREATE TABLE inbound_refusals (
      id uuid PRIMARY KEY,
      organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
      transport text NOT NULL CHECK (transport IN ('smtp', 'http')),
      reason text NOT NULL CHECK (reason IN ('too_large', 'too_many_attachments')),
      envelope_from text,
      envelope_to text[] NOT NULL DEFAULT '{}',
      message_id text,
      size bigint,
      attachment_count integer,
      detail text,
      refused_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX inbound_refusals_org_idx ON inbound_refusals (organization_id, refused_at DESC);

    ALTER TABLE promises_to_pay ADD COLUMN source_inbox_message_id uuid REFERENCES inbox_messages (id) ON DELETE SET NULL;
    ALTER TABLE disputes ADD COLUMN source_inbox_message_id uuid REFERENCES inbox_messages (id) ON DELETE SET NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE disputes DROP COLUMN IF EXISTS source_inbox_message_id;
    ALTER TABLE promises_to_pay DROP COLUMN IF EXISTS source_inbox_message_id;
    DROP TABLE IF EXISTS inbound_refusals, email_bounces, inbox_known_contacts, inbox_attachments, inbox_messages;
    ALTER TABLE organizations DROP COLUMN IF EXISTS inbound_secret_hash, DROP COLUMN IF EXISTS inbound_secret_rotated_at;
  `);
}
