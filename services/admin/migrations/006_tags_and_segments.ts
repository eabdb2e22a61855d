import type { Knex } from 'knex';

export const name = '006_tags_and_segments';

/**
 * Collections outreach (spec 2.9): tags (names unique per organization, case-insensitive), the
 * partners tagged by hand, and customer segments (priority unique per organization, 1 highest).
 * Conditions are stored as validated JSON (packages/platform/src/conditions.ts). Partners live in
 * integrations' schema: `tag_partners.partner_id` is a reference checked on write, not a foreign key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE tags (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      color text NOT NULL,
      rule_condition jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX tags_org_name_uq ON tags (organization_id, lower(name));

    CREATE TABLE tag_partners (
      tag_id uuid NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      partner_id uuid NOT NULL,
      organization_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tag_id, partner_id)
    );
    CREATE INDEX tag_partners_partner_idx ON tag_partners (partner_id);

    CREATE TABLE customer_segments (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      priority integer NOT NULL CHECK (priority >= 1),
      conditions jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT customer_segments_org_priority_uq UNIQUE (organization_id, priority)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS customer_segments, tag_partners, tags');
}
