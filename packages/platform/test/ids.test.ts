import { describe, expect, it } from 'vitest';
import { version } from 'uuid';
import { isUuid, newId } from '../src/index.js';

describe('newId', () => {
  it('gives distinct UUIDv7 strings that sort in creation order', () => {
    const ids = Array.from({ length: 20_000 }, () => newId());
    expect(ids.every((id) => isUuid(id) && version(id) === 7)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('carries the creation time in its first 48 bits', () => {
    const before = Date.now();
    const id = newId();
    const after = Date.now();
    const msecs = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(after + 1);
  });
});
