/**
 * `npm run client:generate`: regenerates packages/client/src/generated/openapi.ts.
 *
 * Without arguments the document is built in-process from the services' route declarations (no
 * stack needed). `npm run client:generate -- --from http://127.0.0.1:8080` reads /openapi.json of a
 * running gateway instead (it must be the same document; test/client.test.ts checks both).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { OpenApiDocument } from '@rp/platform';
import { CLIENT_TYPES_PATH, platformOpenApi, renderClientTypes } from './client-types.js';

async function main(): Promise<void> {
  const i = process.argv.indexOf('--from');
  let doc: OpenApiDocument;
  if (i >= 0) {
    const base = process.argv[i + 1];
    if (!base) throw new Error('--from needs the gateway URL, e.g. --from http://127.0.0.1:8080');
    const res = await fetch(new URL('/openapi.json', base));
    if (!res.ok) throw new Error(`GET ${base}/openapi.json answered ${res.status}`);
    doc = (await res.json()) as OpenApiDocument;
    if (/Not listed/.test(doc.info.description ?? '')) throw new Error('The gateway could not reach every service; its document is incomplete.');
  } else {
    doc = platformOpenApi();
  }
  const text = await renderClientTypes(doc);
  await mkdir(path.dirname(CLIENT_TYPES_PATH), { recursive: true });
  await writeFile(CLIENT_TYPES_PATH, text);
  console.log(`wrote ${path.relative(process.cwd(), CLIENT_TYPES_PATH)} (${Object.keys(doc.paths).length} paths)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
