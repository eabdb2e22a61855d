// Targeted hostile input for `npm run fuzz` (scripts/fuzz.sh), beside schemathesis: for every operation
// of the gateway's /openapi.json, a request built from its schema (required fields with plain valid
// values) is sent once per hostile variant, and any 5xx answer is a finding:
//
//   - a lone UTF-16 surrogate (the JSON escape "\ud800") in each string field of the body, in an object
//     key, in each string query parameter and path parameter (as %ED%A0%80, its UTF-8 form);
//   - each string field one character beyond its documented maxLength (and a string of 100 000
//     characters where none is documented);
//   - each number field with more decimals than any currency has (12.3456789012345), a huge value
//     (1e300) and a tiny one (1e-300), and each decimal string with 20 decimals;
//   - the body gzip-compressed (Content-Encoding: gzip), and a gzip body that inflates beyond the
//     body limit (2 MB of JSON in some 600 kB), followed by a plain request on the same connection.
//
// Usage: node scripts/fuzz-hostile.mjs <gateway-url> <user-token> <api-key>
// FUZZ_OPERATIONS: a regular expression on operationId to restrict the run (default: every operation).
// Exit code 1 when any request got a 5xx (each is printed with its operation, variant and answer).
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';

const [base, token, apiKey] = process.argv.slice(2);
if (!base || !token || !apiKey) {
  process.stderr.write('usage: fuzz-hostile.mjs <gateway-url> <user-token> <api-key>\n');
  process.exit(2);
}
const only = process.env.FUZZ_OPERATIONS ? new RegExp(process.env.FUZZ_OPERATIONS) : null;
const LONE = '\ud800';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const ZERO_UUID = '00000000-0000-7000-8000-000000000000';

const doc = await (await fetch(`${base}/openapi.json`)).json();

function resolve(schema, seen = 0) {
  if (!schema || seen > 20) return schema ?? {};
  if (schema.$ref) return resolve(doc.components.schemas[schema.$ref.split('/').pop()], seen + 1);
  if (schema.allOf) return schema.allOf.reduce((acc, s) => {
    const r = resolve(s, seen + 1);
    return { ...acc, ...r, properties: { ...acc.properties, ...r.properties }, required: [...(acc.required ?? []), ...(r.required ?? [])] };
  }, {});
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const first = alternatives.map((s) => resolve(s, seen + 1)).find((s) => s.type !== 'null') ?? {};
    return { ...first, description: schema.description ?? first.description };
  }
  return schema;
}

const typeOf = (s) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

/** A plain value the schema accepts (as far as a schema can say). */
function sample(schema, depth = 0) {
  const s = resolve(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum.find((v) => v !== null);
  if (s.default !== undefined) return s.default;
  if (s.examples?.length) return s.examples[0];
  switch (typeOf(s)) {
    case 'string':
      if (s.format === 'uuid') return ZERO_UUID;
      if (s.format === 'date') return '2026-11-02';
      if (s.format === 'date-time') return '2026-11-02T10:00:00Z';
      if (s.format === 'email') return 'fuzz@example.com';
      if (s.format === 'uri') return 'https://example.com/';
      return 'fuzz';
    case 'integer':
      return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 1, 1));
    case 'number':
      return Math.max(s.minimum ?? 1, Math.min(s.maximum ?? 1, 1));
    case 'boolean':
      return true;
    case 'array':
      return depth > 6 ? [] : Array.from({ length: Math.max(1, s.minItems ?? 1) }, () => sample(s.items ?? {}, depth + 1));
    case 'object': {
      const out = {};
      if (depth > 6) return out;
      for (const name of s.required ?? []) out[name] = sample(s.properties?.[name] ?? {}, depth + 1);
      return out;
    }
    default:
      return 'fuzz';
  }
}

/** Every string and number field of a body schema: [path, schema], up to a few levels deep. */
function fields(schema, path = [], depth = 0, out = []) {
  const s = resolve(schema);
  const t = typeOf(s);
  if (t === 'string' && !s.enum && s.const === undefined && s.format !== 'binary') out.push({ path, schema: s, kind: 'string' });
  else if (t === 'number' || t === 'integer') out.push({ path, schema: s, kind: 'number' });
  else if (t === 'array' && depth < 5) fields(s.items ?? {}, [...path, 0], depth + 1, out);
  else if (t === 'object' && depth < 5) for (const [name, p] of Object.entries(s.properties ?? {})) fields(p, [...path, name], depth + 1, out);
  return out;
}

function withValue(body, path, value) {
  if (!path.length) return value;
  const copy = structuredClone(body ?? {});
  let node = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    if (node[k] === undefined || node[k] === null || typeof node[k] !== 'object') node[k] = typeof path[i + 1] === 'number' ? [{}] : {};
    node = node[k];
  }
  node[path[path.length - 1]] = value;
  return copy;
}

const findings = [];
let sent = 0;

async function send(op, variant, { method, path, query = '', body, raw, headers = {} }) {
  const h = { authorization: `Bearer ${op.credential}`, ...headers };
  let payload = raw;
  if (body !== undefined && payload === undefined) {
    payload = JSON.stringify(body);
    h['content-type'] ??= 'application/json';
  }
  sent++;
  try {
    const res = await fetch(base + path + query, { method: method.toUpperCase(), headers: h, body: payload, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    if (res.status >= 500) findings.push(`${op.id} [${variant}] ${method.toUpperCase()} ${path}${query} → ${res.status} ${text.slice(0, 300)}`);
  } catch (err) {
    findings.push(`${op.id} [${variant}] ${method.toUpperCase()} ${path}${query} → no answer (${err.message})`);
  }
}

const operations = [];
for (const [template, ops] of Object.entries(doc.paths)) {
  for (const method of METHODS) {
    const op = ops[method];
    if (!op || (only && !only.test(op.operationId))) continue;
    // the middleware routes take the organization's API key; every other route a user token
    operations.push({ id: op.operationId, template, method, op, credential: template.startsWith('/v2/integrations/providers/middleware/') ? apiKey : token });
  }
}

for (const o of operations) {
  const params = o.op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const fill = (overrides = {}) =>
    o.template.replace(/\{([^}]+)\}/g, (_, name) => overrides[name] ?? encodeURIComponent(String(sample(pathParams.find((p) => p.name === name)?.schema ?? {}))));
  const path = fill();
  const queryOf = (extra = {}) => {
    const q = new URLSearchParams();
    for (const p of queryParams) if (p.required) q.set(p.name, String(sample(p.schema)));
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    const s = q.toString();
    return s ? `?${s}` : '';
  };
  const jsonSchema = o.op.requestBody?.content?.['application/json']?.schema;
  const body = jsonSchema ? sample(jsonSchema) : undefined;
  const plain = { method: o.method, path, query: queryOf(), body };

  // path and query: the UTF-8 form of a lone surrogate, and a query value beyond its maxLength
  for (const p of pathParams) await send(o, `lone surrogate in path ${p.name}`, { ...plain, path: fill({ [p.name]: '%ED%A0%80' }) });
  for (const p of queryParams) {
    const s = resolve(p.schema);
    if (typeOf(s) !== 'string' || s.enum) continue;
    await send(o, `lone surrogate in query ${p.name}`, { ...plain, query: `${queryOf()}${queryOf() ? '&' : '?'}${encodeURIComponent(p.name)}=%ED%A0%80` });
    await send(o, `over-long query ${p.name}`, { ...plain, query: queryOf({ [p.name]: 'q'.repeat((s.maxLength ?? 4000) + 1) }) });
  }
  if (!jsonSchema) continue;

  for (const f of fields(jsonSchema)) {
    const at = f.path.join('.') || '(body)';
    if (f.kind === 'string') {
      await send(o, `lone surrogate in ${at}`, { ...plain, body: withValue(body, f.path, `fuzz${LONE}`) });
      await send(o, `over-long ${at}`, { ...plain, body: withValue(body, f.path, 's'.repeat((f.schema.maxLength ?? 99_999) + 1)) });
      await send(o, `over-precise decimal string in ${at}`, { ...plain, body: withValue(body, f.path, '12.34567890123456789012') });
    } else {
      for (const n of [12.3456789012345, 1e300, 1e-300]) await send(o, `number ${n} in ${at}`, { ...plain, body: withValue(body, f.path, n) });
    }
  }
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    await send(o, 'lone surrogate in an object key', { ...plain, body: { ...body, [`key${LONE}`]: 'x' } });
  }
  await send(o, 'gzip body', { ...plain, raw: gzipSync(Buffer.from(JSON.stringify(body))), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
  // 2 MB of one letter, then 800 kB of incompressible text: ~600 kB sent (inside the gateway's limit on
  // the bytes sent), most of it still unread when the service refuses the inflated body
  const bomb = gzipSync(Buffer.from(JSON.stringify({ padding: 'a'.repeat(2_000_000), noise: randomBytes(600_000).toString('base64'), ...(typeof body === 'object' && !Array.isArray(body) ? body : {}) })));
  await send(o, 'gzip body inflating beyond the limit', { ...plain, raw: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
  // the connection the bomb went over serves the next requests (no hang behind unread bytes): the first
  // may go over another connection while the bomb's is still sending, the second then over the bomb's
  await send(o, 'plain request after the gzip bomb', plain);
  await send(o, 'second plain request after the gzip bomb', plain);
}

process.stdout.write(`[fuzz] hostile input: ${operations.length} operations, ${sent} requests, ${findings.length} answered 5xx\n`);
for (const f of findings) process.stdout.write(`  ${f}\n`);
process.exit(findings.length ? 1 : 0);
