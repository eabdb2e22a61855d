import type { Knex } from 'knex';

export const name = '001_ledger';

/**
 * The AR ledger: partners (customers), documents (invoices and credit memos) and their line items.
 * Owned by integrations (the only writer); other services read it through the kernel's ledger read
 * module (`@rp/platform` ledger.ts).
 *
 * - `origin` says where a row came from: `middleware` (the push endpoints) or `connection:<id>`
 *   (a pull sync). A partner's `remote_id` is unique per origin within an organization.
 * - Documents share one table, `kind` = `invoice` (debit, SAP indicator S) or `credit_memo`
 *   (credit, H), so a re-push that flips the indicator keeps its `id` (the `service_id`).
 *   The upsert key is (organization_id, company_code, fiscal_year, document_number).
 * - Amounts are NUMERIC: exact decimals, never floats. `amount_open` is what the source system
 *   says is still open (the whole amount while `status_open`, 0 once cleared, a sync's balance).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE partners (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      business_unit_id uuid,
      origin text NOT NULL,
      remote_id text NOT NULL,
      account_number text,
      name text NOT NULL,
      legal_name text,
      email text,
      phone text,
      currency char(3),
      company_code text,
      search_term text,
      address jsonb NOT NULL DEFAULT '{}'::jsonb,
      attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
      parent_id uuid,
      assignee_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT partners_org_origin_remote_uq UNIQUE (organization_id, origin, remote_id)
    );
    CREATE INDEX partners_org_name_idx ON partners (organization_id, lower(name));
    CREATE INDEX partners_org_account_idx ON partners (organization_id, account_number) WHERE account_number IS NOT NULL;

    CREATE TABLE documents (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      business_unit_id uuid,
      origin text NOT NULL,
      kind text NOT NULL CONSTRAINT documents_kind_check CHECK (kind IN ('invoice', 'credit_memo')),
      remote_id text,
      partner_id uuid REFERENCES partners (id) ON DELETE SET NULL,
      customer_code text,
      company_code text NOT NULL,
      fiscal_year text NOT NULL,
      document_number text NOT NULL,
      document_type text,
      invoice_doc_type text,
      currency char(3) NOT NULL,
      exchange_rate text,
      reference text,
      assignment text,
      text text,
      reason_code text,
      clearing_document_number text,
      document_date date,
      net_due_date date,
      posting_date date,
      clearing_date date,
      amount_in_document_currency numeric(20, 4) NOT NULL,
      amount_in_local_currency numeric(20, 4),
      amount_open numeric(20, 4) NOT NULL,
      status_open boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT documents_natural_key_uq UNIQUE (organization_id, company_code, fiscal_year, document_number)
    );
    CREATE INDEX documents_org_open_idx ON documents (organization_id, kind, net_due_date) WHERE status_open;
    CREATE INDEX documents_org_partner_idx ON documents (organization_id, partner_id);
    CREATE INDEX documents_org_customer_code_idx ON documents (organization_id, customer_code) WHERE partner_id IS NULL;
    CREATE INDEX documents_org_number_idx ON documents (organization_id, document_number);
    CREATE INDEX documents_org_reference_idx ON documents (organization_id, reference) WHERE reference IS NOT NULL;

    CREATE TABLE line_items (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      document_id uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
      line_number integer NOT NULL,
      description text,
      quantity numeric(20, 6),
      unit_amount numeric(20, 6),
      total_amount numeric(20, 4),
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT line_items_document_line_uq UNIQUE (document_id, line_number)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS line_items, documents, partners');
}
