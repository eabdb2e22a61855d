import type { Knex } from 'knex';

export const name = '010_master_bank_accounts_discount_terms';

/**
 * Customer master data that cash application matches with:
 *
 * - `partner_master_bank_accounts`: the bank accounts the ERP's customer master gives for a partner
 *   (the customer push's `bank_accounts`), as opposed to cash-app's `partner_bank_accounts`, which
 *   it learns from approved payments. An account is an IBAN (`account_identifier` = the IBAN,
 *   upper case without spaces, no bank code) or a domestic account number with its bank code
 *   (`account_identifier` = the account number, letters and digits only, upper case). One row per
 *   (organization, partner, identifier, bank code); a partner's rows go with it.
 * - `documents.discount_terms`: the early-payment discounts of an invoice's payment terms (SAP's
 *   cash discounts 1 and 2), a JSON array of `{due_date, percent}` (YYYY-MM-DD, a decimal string
 *   above 0 and below 100 with at most 4 decimals), earliest first, at most 3; `[]` when the terms
 *   give none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE partner_master_bank_accounts (
      id uuid PRIMARY KEY,
      organization_id uuid NOT NULL,
      partner_id uuid NOT NULL REFERENCES partners (id) ON DELETE CASCADE,
      account_identifier text NOT NULL,
      bank_code text,
      created_at timestamptz NOT NULL DEFAULT now(),
      modified_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT partner_master_bank_accounts_identifier_check CHECK (
        CASE WHEN bank_code IS NULL
             THEN account_identifier ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'
             ELSE account_identifier ~ '^[A-Z0-9]{1,34}$' AND bank_code ~ '^[A-Z0-9]{1,15}$' END)
    );
    CREATE UNIQUE INDEX partner_master_bank_accounts_uq
      ON partner_master_bank_accounts (organization_id, partner_id, account_identifier, coalesce(bank_code, ''));
    CREATE INDEX partner_master_bank_accounts_partner_idx ON partner_master_bank_accounts (partner_id);

    ALTER TABLE documents
      ADD COLUMN discount_terms jsonb NOT NULL DEFAULT '[]'::jsonb,
      ADD CONSTRAINT documents_discount_terms_check
        CHECK (jsonb_typeof(discount_terms) = 'array' AND jsonb_array_length(discount_terms) <= 3
          -- every term an object with a YYYY-MM-DD due_date and a percent that is a decimal string above 0 and
          -- below 100 with at most 4 decimals (\\? is a literal ? for knex, not a binding)
          AND NOT jsonb_path_exists(discount_terms, '$[*] \\? (@.type() != "object" || !exists(@.due_date) || !exists(@.percent)
            || @.due_date.type() != "string" || @.percent.type() != "string"
            || !(@.due_date like_regex "^[0-9]{4}-[0-9]{2}-[0-9]{2}$") || !(@.percent like_regex "^[0-9]+([.][0-9]{1,4})\\?$")
            || @.percent.double() <= 0 || @.percent.double() >= 100)'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE documents DROP CONSTRAINT IF EXISTS documents_discount_terms_check, DROP COLUMN IF EXISTS discount_terms;
    DROP TABLE IF EXISTS partner_master_bank_accounts;
  `);
}
