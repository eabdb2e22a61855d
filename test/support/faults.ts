// Fault injection for end-to-end tests: database writes that fail on purpose, the way an outage right
// after a side effect (an SMTP send, an ERP call) would make them fail.
import type { TestStack } from './stack.js';

export interface InjectedUpdateFailure {
  /** How many matching UPDATEs were attempted so far (the failed ones included). */
  attempts(): Promise<number>;
  /** Removes the trigger, its function and its counter. */
  restore(): Promise<void>;
}

/**
 * The first `times` UPDATEs of `table` (schema-qualified) whose row matches `when` (a trigger WHEN
 * condition over OLD and NEW) raise; later ones pass. A sequence counts the attempts, so the count
 * survives the rolled-back transactions. `name` must be unique per test database.
 */
export async function failUpdates(
  stack: Pick<TestStack, 'sql'>,
  opts: { table: string; when: string; name: string; times?: number },
): Promise<InjectedUpdateFailure> {
  const schema = opts.table.split('.')[0];
  const fn = `${schema}.${opts.name}`;
  const seq = `${schema}.${opts.name}_seq`;
  await stack.sql(`CREATE SEQUENCE ${seq}`);
  await stack.sql(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF nextval('${seq}') <= ${opts.times ?? 1} THEN RAISE EXCEPTION 'injected failure of an update of %', TG_TABLE_NAME; END IF;
      RETURN NEW;
    END $$`);
  await stack.sql(`CREATE TRIGGER ${opts.name} BEFORE UPDATE ON ${opts.table} FOR EACH ROW WHEN (${opts.when}) EXECUTE FUNCTION ${fn}()`);
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
