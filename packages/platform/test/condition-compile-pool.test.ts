/**
 * Large conditions compile on the kernel's condition threads (conditions/compiler.ts): the same SQL and
 * bindings as on the calling thread, small ones stay on it, and a full pool refuses with 503 and
 * Retry-After instead of queueing. The end-to-end listing through the API is in
 * test/condition-bounds.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { compileConditions, compileConditionsOffLoop, createConditionCompilePool, compiledSize, INLINE_COMPILE_NODES, type Condition, type ConditionCompilePool, type ResolvedTag } from '../src/conditions/index.js';
import { WorkerPoolBusyError } from '../src/worker-pool.js';

let pool: ConditionCompilePool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

const TAG = '019a0000-0000-7000-8000-0000000000aa';
const rule: Condition = { any: Array.from({ length: 98 }, (_, i) => ({ field: 'name', op: 'eq', value: `Customer ${i}` })) };
const tags = new Map<string, ResolvedTag>([[TAG, { id: TAG, rule_condition: rule }]]);
/** 1 + 45 × (1 + 99) nodes after expansion */
const large: Condition = { field: 'tag', op: 'in', value: Array.from({ length: 45 }, () => TAG) };
const exclude: Condition[] = [{ field: 'overdue_lc', op: 'gt', value: '100.00' }];

describe('condition compile pool', () => {
  it('compiles a large condition on a thread to exactly what the calling thread compiles', async () => {
    pool = createConditionCompilePool({ threads: 1, maxQueue: 2 });
    const size = compiledSize(large, tags) + compiledSize(exclude[0]!, tags);
    expect(size).toBeGreaterThan(INLINE_COMPILE_NODES);
    const threaded = await compileConditionsOffLoop(large, exclude, tags, size, pool);
    expect(threaded).toEqual(compileConditions(large, exclude, tags));
    expect(threaded.aggregate).toBe(true);
    expect(threaded.where).toHaveLength(2);
  });

  it('refuses with 503 and Retry-After when every thread compiles and the queue is full; small conditions never wait for it', async () => {
    pool = createConditionCompilePool({ threads: 1, maxQueue: 0 });
    const size = compiledSize(large, tags);
    const running = compileConditionsOffLoop(large, [], tags, size, pool);
    const refused = await compileConditionsOffLoop(large, [], tags, size, pool).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(WorkerPoolBusyError);
    expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
    // a small condition compiles on the calling thread even while the pool is full
    const small = await compileConditionsOffLoop(rule, [], tags, compiledSize(rule, tags), pool);
    expect(small).toEqual(compileConditions(rule, [], tags));
    expect(await running).toEqual(compileConditions(large, [], tags));
    expect(pool.pending).toBe(0);
  });
});
