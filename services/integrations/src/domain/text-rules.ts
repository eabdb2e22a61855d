/**
 * Text rules of the integrations service's inputs that the kernel's request-wide checks do not
 * reach: a lone surrogate (an unpaired `\ud800`…`\udfff` escape) is valid JSON but not text —
 * UTF-8 cannot encode it and PostgreSQL refuses it in jsonb. Push records (validated one by one,
 * `perRecordBody`) and connection settings (stored as jsonb) refuse it with the field named.
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** Whether the string holds a UTF-16 code unit of a surrogate pair without its partner (String#isWellFormed, ES2024). */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** The string with each lone surrogate shown as U+FFFD (for naming a key in a message). */
export function withoutLoneSurrogates(text: string): string {
  return text.replace(LONE_SURROGATES, '\uFFFD');
}

/** Where a string value or key of `value` holds a lone surrogate. Iterative, so any nesting depth is fine. */
export function findLoneSurrogates(value: unknown): { path: PropertyKey[]; key: boolean }[] {
  const found: { path: PropertyKey[]; key: boolean }[] = [];
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value, path: [] }];
  while (stack.length) {
    const { value: v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (hasLoneSurrogate(v)) found.push({ path, key: false });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] });
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (hasLoneSurrogate(k)) found.push({ path: [...path, k], key: true });
        stack.push({ value: (v as Record<string, unknown>)[k], path: [...path, k] });
      }
    }
  }
  return found;
}
