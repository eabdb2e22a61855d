/**
 * docs/webhooks.md documents every event type of the catalogue (EVENT_CATALOGUE): a heading and an
 * example body each, so a type added without docs fails here. Each example is held to the schema
 * the gateway's OpenAPI document gives its body: the type's `<Type>Event` webhook component where a
 * service declares the type, else the generic `Event` envelope with `data.object` checked against
 * the resource's component (zod's JSON Schema reader over the document's components).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EVENT_CATALOGUE, EVENT_TYPES, eventComponentName } from '@rp/platform';
import { platformOpenApi } from '../scripts/client-types.js';

const page = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');

/** The component of each catalogue resource that a route returns today (the API's view of it). */
const RESOURCE_COMPONENTS: Record<string, string> = {
  bank_statement: 'BankStatement',
  payment: 'Payment',
  remittance: 'Remittance',
  outreach: 'OutreachRecord',
  connection: 'Connection',
  partner: 'Partner',
  extraction: 'PlaybookExtraction',
  proposal: 'KnowledgeProposal',
  report_run: 'ReportRun',
};

/** The example body under the `### \`type\`` heading (its first JSON block), or null. */
function example(type: string): unknown {
  const at = page.indexOf(`\n### \`${type}\`\n`);
  if (at < 0) return null;
  const block = /```json\n([\s\S]*?)\n```/.exec(page.slice(at));
  return block ? JSON.parse(block[1]!) : null;
}

describe('docs/webhooks.md', () => {
  it('names every event type of the catalogue with a heading, a row and an example body, and no other type', () => {
    const missing = EVENT_TYPES.filter((t) => example(t) === null || !page.includes(`| [\`${t}\`](#`));
    expect(missing, 'add each to the event catalogue of docs/webhooks.md').toEqual([]);
    const headed = [...page.matchAll(/^### `([a-z_]+\.[a-z_]+)`$/gm)].map((m) => m[1]);
    expect(headed).toEqual(EVENT_TYPES);
  });

  it("gives each type an example that is a valid body of that type: the webhook's schema, or the envelope and the resource's schema", () => {
    const doc = platformOpenApi() as unknown as { webhooks?: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('"#/components/schemas/', '"#/$defs/'));
    const schema = (name: string) => z.fromJSONSchema({ $ref: `#/$defs/${name}`, $defs: defs } as never);
    const wrong: string[] = [];
    let checkedObjects = 0;
    for (const type of EVENT_TYPES) {
      const body = example(type) as { id: string; type: string; data: { object: unknown } };
      expect(body.type, type).toBe(type);
      expect(body.id, type).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const checks: [string, unknown][] = doc.webhooks?.[type] ? [[eventComponentName(type), body]] : [['Event', body]];
      const resource = RESOURCE_COMPONENTS[EVENT_CATALOGUE[type].resource];
      if (!doc.webhooks?.[type] && resource) checks.push([resource, body.data.object]);
      for (const [name, value] of checks) {
        const result = schema(name).safeParse(value);
        if (name !== 'Event') checkedObjects++;
        if (!result.success) wrong.push(`${type} (${name}): ${result.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checkedObjects).toBeGreaterThanOrEqual(EVENT_TYPES.length - 4);
  });
});
