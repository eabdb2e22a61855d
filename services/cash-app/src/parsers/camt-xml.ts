/** ISO 20022 XML read as nested objects by a streaming parser (saxes), and the lookups the CAMT reader uses on them. */
import { SaxesParser } from 'saxes';
import { StatementParseError, text } from './types.js';

export type Node = Record<string, unknown>;

/** Elements that may repeat: always read as arrays. */
const ARRAYS = new Set(['Stmt', 'Ntfctn', 'Rpt', 'Bal', 'Ntry', 'NtryDtls', 'TxDtls', 'Ustrd', 'Strd', 'RfrdDocInf']);

const local = (name: string) => name.slice(name.indexOf(':') + 1);

/** Characters of XML handed to the streaming parser between two yields. */
const XML_CHUNK = 256 * 1024;

/**
 * The document as nested objects: child elements by local name, attributes as `@name`, text as `#text`.
 * The XML is fed to saxes in chunks, yielding between them (see ParseSteps).
 */
export function* readXml(xml: string): Generator<number, Node, void> {
  const parser = new SaxesParser({ position: true });
  const root: Node = {};
  const stack: Node[] = [root];
  parser.on('opentag', (tag) => {
    const node: Node = {};
    for (const [k, v] of Object.entries(tag.attributes as Record<string, string>)) {
      if (k !== 'xmlns' && !k.startsWith('xmlns:')) node[`@${local(k)}`] = v;
    }
    const parent = stack[stack.length - 1];
    const name = local(tag.name);
    const existing = parent[name];
    if (existing === undefined) parent[name] = ARRAYS.has(name) ? [node] : node;
    else if (Array.isArray(existing)) existing.push(node);
    else parent[name] = [existing, node];
    stack.push(node);
  });
  const onText = (t: string) => {
    const node = stack[stack.length - 1];
    node['#text'] = ((node['#text'] as string | undefined) ?? '') + t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    stack.pop();
  });
  const fail = (err: unknown) =>
    new StatementParseError(`line ${parser.line}`, `XML is not well-formed: ${(err as Error).message.replace(/^[^:]*:\d+:\d+: /, '')}`);
  let at = 0;
  while (at < xml.length) {
    let end = Math.min(xml.length, at + XML_CHUNK);
    // never split a surrogate pair between two chunks
    const last = xml.charCodeAt(end - 1);
    if (end < xml.length && last >= 0xd800 && last <= 0xdbff) end += 1;
    try {
      parser.write(xml.slice(at, end));
    } catch (err) {
      throw fail(err);
    }
    at = end;
    yield parser.line;
  }
  try {
    parser.close();
  } catch (err) {
    throw fail(err);
  }
  return root;
}

export function child(node: unknown, ...path: string[]): unknown {
  let cur: unknown = node;
  for (const p of path) {
    if (cur == null || typeof cur !== 'object') return undefined;
    cur = (cur as Node)[p];
    if (Array.isArray(cur)) cur = cur[0];
  }
  return cur;
}

export function str(node: unknown, ...path: string[]): string | null {
  const v = child(node, ...path);
  if (v == null) return null;
  if (typeof v === 'object') return text((v as Node)['#text'] as string | undefined);
  return text(String(v as string | number));
}

export function list(node: unknown, name: string): Node[] {
  if (node == null || typeof node !== 'object') return [];
  const v = (node as Node)[name];
  if (v == null) return [];
  return (Array.isArray(v) ? v : [v]) as Node[];
}
