import type { Knex } from 'knex';

export const name = '009_statement_totals';

/**
 * A statement carries its counts and totals, so reading it (or a page of 200 statements) costs no
 * scan of its transactions: `totals` is a JSON array, one element per currency of the stored lines,
 * ordered by currency: `{currency, credit_count, credit_total, debit_count, debit_total}` (totals as
 * decimal text, debits signed). It is written together with `transaction_count` when processing has
 * stored the lines (refreshTransactionCount); statements stored before are filled in here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE bank_statements ADD COLUMN totals jsonb NOT NULL DEFAULT '[]'::jsonb;
    UPDATE bank_statements s SET totals = t.totals
      FROM (
        SELECT statement_id,
               jsonb_agg(jsonb_build_object(
                 'currency', currency, 'credit_count', credit_count, 'credit_total', credit_total,
                 'debit_count', debit_count, 'debit_total', debit_total) ORDER BY currency) AS totals
          FROM (
            SELECT statement_id, btrim(currency) AS currency,
                   count(*) FILTER (WHERE amount > 0) AS credit_count,
                   coalesce(sum(amount) FILTER (WHERE amount > 0), 0)::text AS credit_total,
                   count(*) FILTER (WHERE amount < 0) AS debit_count,
                   coalesce(sum(amount) FILTER (WHERE amount < 0), 0)::text AS debit_total
              FROM bank_transactions
             GROUP BY statement_id, btrim(currency)
          ) g
         GROUP BY statement_id
      ) t
     WHERE t.statement_id = s.id;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE bank_statements DROP COLUMN totals');
}
