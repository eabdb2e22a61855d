import type { Knex } from 'knex';

export const name = '002_cash_application';

/**
 * Cash application: bank accounts, statements and their transactions, payments proposed from them
 * and their allocations to ledger invoices, exchange rates, remittances and outreach records.
 * Invoices and partners are referenced by id only (they live in the integrations schema and are
 * read through the kernel's ledger module), so there are no foreign keys across schemas.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE bank_accounts (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      account_identifier text NOT NULL,
      iban text,
      account_number text,
      bank_code text,
      bank_name text,
      currency char(3),
      name text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT bank_accounts_org_identifier_uq UNIQUE (organization_id, account_identifier)
    );

    CREATE TABLE bank_statements (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      bank_account_id uuid REFERENCES bank_accounts (id) ON DELETE RESTRICT,
      source text NOT NULL DEFAULT 'upload' CONSTRAINT bank_statements_source_check CHECK (source IN ('upload', 'connection')),
      format text NOT NULL CONSTRAINT bank_statements_format_check CHECK (format IN ('camt053', 'bai2', 'mt940', 'csv', 'json')),
      status text NOT NULL CONSTRAINT bank_statements_status_check
        CHECK (status IN ('uploaded', 'processing', 'ready', 'approved', 'synced', 'failed')),
      file_name text,
      file_sha256 text,
      content bytea,
      options jsonb NOT NULL DEFAULT '{}'::jsonb,
      statement_number text,
      statement_date date,
      opening_balance numeric(20, 4),
      closing_balance numeric(20, 4),
      currency char(3),
      transaction_count integer NOT NULL DEFAULT 0,
      error text,
      workflow_id text,
      uploaded_by uuid,
      approved_by uuid,
      approved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX bank_statements_org_idx ON bank_statements (organization_id, created_at DESC, id DESC);

    CREATE TABLE bank_transactions (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      statement_id uuid NOT NULL REFERENCES bank_statements (id) ON DELETE CASCADE,
      bank_account_id uuid REFERENCES bank_accounts (id) ON DELETE RESTRICT,
      unique_import_id text NOT NULL,
      sequence integer NOT NULL,
      amount numeric(20, 4) NOT NULL,
      currency char(3) NOT NULL,
      is_deposit boolean GENERATED ALWAYS AS (amount > 0) STORED,
      is_payment boolean,
      value_date date,
      booking_date date,
      counterparty_name text,
      counterparty_account text,
      counterparty_iban text,
      counterparty_bank_code text,
      remittance_information text,
      bank_reference text,
      end_to_end_id text,
      transaction_code text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT bank_transactions_org_import_uq UNIQUE (organization_id, unique_import_id)
    );
    CREATE INDEX bank_transactions_statement_idx ON bank_transactions (statement_id, sequence);
    CREATE INDEX bank_transactions_org_date_idx ON bank_transactions (organization_id, booking_date);

    CREATE TABLE exchange_rates (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      base_currency char(3) NOT NULL,
      quote_currency char(3) NOT NULL,
      rate_date date NOT NULL,
      rate numeric(24, 10) NOT NULL CONSTRAINT exchange_rates_rate_check CHECK (rate > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT exchange_rates_uq UNIQUE (organization_id, base_currency, quote_currency, rate_date)
    );

    CREATE TABLE remittances (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      partner_id uuid,
      status text NOT NULL DEFAULT 'submitted',
      source text NOT NULL DEFAULT 'json',
      currency char(3),
      transaction_amount numeric(20, 4),
      transaction_date date,
      transaction_number text,
      payment_method text,
      payer_name text,
      payer_email text,
      payer_bank_details jsonb,
      payee_bank_details jsonb,
      agent_confidence_score numeric(5, 4),
      agent_confidence_reason text,
      agent_error_code text,
      agent_uncertainties jsonb NOT NULL DEFAULT '[]'::jsonb,
      bank_transaction_id uuid REFERENCES bank_transactions (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX remittances_org_idx ON remittances (organization_id, created_at DESC, id DESC);

    CREATE TABLE remittance_allocations (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      remittance_id uuid NOT NULL REFERENCES remittances (id) ON DELETE CASCADE,
      invoice_number text NOT NULL,
      invoice_id uuid,
      amount_paid numeric(20, 4) NOT NULL DEFAULT 0,
      amount_discount numeric(20, 4) NOT NULL DEFAULT 0,
      amount_withheld numeric(20, 4) NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX remittance_allocations_remittance_idx ON remittance_allocations (remittance_id);

    CREATE TABLE payments (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      bank_transaction_id uuid NOT NULL REFERENCES bank_transactions (id) ON DELETE CASCADE,
      partner_id uuid,
      remittance_id uuid REFERENCES remittances (id) ON DELETE SET NULL,
      status text NOT NULL DEFAULT 'unapproved' CONSTRAINT payments_status_check CHECK (status IN ('unapproved', 'approved')),
      amount numeric(20, 4) NOT NULL,
      currency char(3) NOT NULL,
      payment_date date,
      match_score numeric(5, 4),
      match_reasons jsonb NOT NULL DEFAULT '[]'::jsonb,
      posting_error text,
      posted_at timestamptz,
      approved_by uuid,
      approved_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX payments_org_idx ON payments (organization_id, created_at DESC, id DESC);
    CREATE INDEX payments_transaction_idx ON payments (bank_transaction_id);

    CREATE TABLE payment_allocations (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      payment_id uuid NOT NULL REFERENCES payments (id) ON DELETE CASCADE,
      invoice_id uuid NOT NULL,
      amount_paid numeric(20, 4) NOT NULL DEFAULT 0,
      amount_discount numeric(20, 4) NOT NULL DEFAULT 0,
      amount_withheld numeric(20, 4) NOT NULL DEFAULT 0,
      adjustment_id uuid REFERENCES adjustments (id) ON DELETE RESTRICT,
      adjustment_amount numeric(20, 4) NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT payment_allocations_payment_invoice_uq UNIQUE (payment_id, invoice_id)
    );
    CREATE INDEX payment_allocations_invoice_idx ON payment_allocations (organization_id, invoice_id);

    -- What the platform has learned about who pays from which account (IBAN first in matching).
    CREATE TABLE partner_bank_accounts (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      partner_id uuid NOT NULL,
      account_identifier text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT partner_bank_accounts_uq UNIQUE (organization_id, account_identifier, partner_id)
    );

    CREATE TABLE outreach_records (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      outreach_type text NOT NULL CONSTRAINT outreach_records_type_check CHECK (outreach_type IN ('payment_receipt', 'remittance_request')),
      status text NOT NULL DEFAULT 'pending' CONSTRAINT outreach_records_status_check CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
      skip_reason text,
      error text,
      bank_transaction_id uuid,
      payment_id uuid,
      partner_id uuid,
      email_id text,
      recipient text,
      requested_by uuid,
      sending_started_at timestamptz,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX outreach_records_org_idx ON outreach_records (organization_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS outreach_records, partner_bank_accounts, payment_allocations, payments,
    remittance_allocations, remittances, exchange_rates, bank_transactions, bank_statements, bank_accounts`);
}
