import type { Knex } from 'knex';

export const name = '015_promise_amount_within_open';

/**
 * A promise to pay never promises more than its invoices had open when it was made, in the database
 * as well as in the API's validation: `promise_open_total` sums `open_amounts_at_creation` (decimal
 * text per invoice id) exactly, and the CHECK holds `amount` to it. What coverage was measured last
 * (`covered_amount`) is never negative.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION promise_open_total(amounts jsonb) RETURNS numeric LANGUAGE sql IMMUTABLE
      AS $fn$ SELECT coalesce(sum(value::numeric), 0) FROM jsonb_each_text(CASE WHEN jsonb_typeof(amounts) = 'object' THEN amounts ELSE '{}'::jsonb END) $fn$;
    ALTER TABLE promises_to_pay
      ADD CONSTRAINT promises_to_pay_amount_within_open CHECK (amount <= promise_open_total(open_amounts_at_creation)),
      ADD CONSTRAINT promises_to_pay_covered_amount_check CHECK (covered_amount IS NULL OR covered_amount >= 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE promises_to_pay DROP CONSTRAINT IF EXISTS promises_to_pay_amount_within_open, DROP CONSTRAINT IF EXISTS promises_to_pay_covered_amount_check;
    DROP FUNCTION IF EXISTS promise_open_total(jsonb);
  `);
}
