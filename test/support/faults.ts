// Fault injection for end-to-end tests: database writes that fail on purpose, the way an outage right
// after a side effect (an SMTP send, an ERP call) would make them fail.
import type { TestStack } from './stack.js';

export interface InjectedUpdateFailure {
  /** How many matching writes were attempted so far (the failed ones included). */
  attempts(): Promise<number>;
  /** Removes the trigger, its function and its counter. */
  restore(): Promise<void>;
}

interface FailureOptions {
  table: string;
  when: string;
  name: string;
  times?: number;
}

/**
 * The first `times` UPDATEs of `table` (schema-qualified) whose row matches `when` (a trigger WHEN
 * condition over OLD and NEW) raise; later ones pass. A sequence counts the attempts, so the count
 * survives the rolled-back transactions. `name` must be unique per test database.
 */
export async function failUpdates(stack: Pick<TestStack, 'sql'>, opts: FailureOptions): Promise<InjectedUpdateFailure> {
  return injectFailures(stack, opts, 'BEFORE UPDATE', 'an update of');
}

/**
 * The first `times` INSERTs into `table` whose new row matches `when` (over NEW) raise after the row
 * is written (an AFTER trigger), so the statement and its transaction roll back: a failure after the
 * write and before the commit. Counted like failUpdates.
 */
export async function failInserts(stack: Pick<TestStack, 'sql'>, opts: FailureOptions): Promise<InjectedUpdateFailure> {
  return injectFailures(stack, opts, 'AFTER INSERT', 'an insert into');
}

async function injectFailures(stack: Pick<TestStack, 'sql'>, opts: FailureOptions, trigger: string, what: string): Promise<InjectedUpdateFailure> {
  const schema = opts.table.split('.')[0];
  const fn = `${schema}.${opts.name}`;
  const seq = `${schema}.${opts.name}_seq`;
  await stack.sql(`CREATE SEQUENCE ${seq}`);
  await stack.sql(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('${seq}') <= ${opts.times ?? 1} THEN RAISE EXCEPTION 'injected failure of ${what} %', TG_TABLE_NAME; END IF;
      RETURN NEW;
    END $$`);
  await stack.sql(`CREATE TRIGGER ${opts.name} ${trigger} ON ${opts.table} FOR EACH ROW WHEN (${opts.when}) EXECUTE FUNCTION ${fn}()`);
  return {
    async attempts() {
      const [row] = await stack.sql(`SELECT CASE WHEN is_called THEN last_value ELSE 0 END::int AS n FROM ${seq}`);
      return row.n as number;
    },
    async restore() {
      await stack.sql(`DROP TRIGGER IF EXISTS ${opts.name} ON ${opts.table}`);
      await stack.sql(`DROP FUNCTION IF EXISTS ${fn}()`);
      await stack.sql(`DROP SEQUENCE IF EXISTS ${seq}`);
    },
  };
}
