/**
 * The API reference at /docs: Swagger UI (the npm package swagger-ui-dist, pinned in package.json)
 * rendering the gateway's /openapi.json. Its assets are served by the gateway itself from the
 * installed package — no CDN: the platform runs where the internet may not be reachable.
 *
 * - `/docs`: the page (no-cache, so a new deployment is picked up at once).
 * - `/docs/init.js`: loads /openapi.json, sets the document's server to this page's own origin (so
 *   "Try it out" calls this gateway whatever `servers` the document lists) and starts Swagger UI.
 * - `/docs/assets/<swagger-ui version>/<file>`: the package's files; the version is in the path, so
 *   they are cached for a year as immutable and a new version gets new URLs.
 *
 * "Try it out" with a pasted token: the Authorize button takes a bearer token (`bearerAuth`), which
 * Swagger UI sends as `Authorization: Bearer <token>` on the calls it makes from the page.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type Koa from 'koa';
import { MethodNotAllowedError } from '@rp/platform';

const require = createRequire(import.meta.url);
const packageDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
/** The installed swagger-ui-dist version (part of the asset URLs). */
export const SWAGGER_UI_VERSION = (JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
export const DOCS_ASSET_PREFIX = `/docs/assets/${SWAGGER_UI_VERSION}/`;

/** The package files the page uses, with their content types. Nothing else of the package is served. */
const ASSET_TYPES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receivables Platform API reference</title>
<link rel="stylesheet" href="${DOCS_ASSET_PREFIX}swagger-ui.css">
<link rel="icon" type="image/png" href="${DOCS_ASSET_PREFIX}favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${DOCS_ASSET_PREFIX}favicon-16x16.png" sizes="16x16">
<style>body { margin: 0; } #docs-status { font: 15px system-ui, sans-serif; padding: 24px; }</style>
</head>
<body>
<div id="docs-status">Loading /openapi.json…</div>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSET_PREFIX}swagger-ui-bundle.js" charset="utf-8"></script>
<script src="/docs/init.js" charset="utf-8"></script>
</body>
</html>
`;

const INIT = `'use strict';
(function () {
  var status = document.getElementById('docs-status');
  fetch('/openapi.json', { headers: { accept: 'application/json' } })
    .then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.json();
    })
    .then(function (doc) {
      // "Try it out" calls the gateway that serves this page.
      doc.servers = [{ url: window.location.origin, description: 'This gateway' }];
      status.remove();
      window.ui = SwaggerUIBundle({
        spec: doc,
        dom_id: '#swagger-ui',
        deepLinking: true,
        docExpansion: 'list',
        displayOperationId: true,
        displayRequestDuration: true,
        filter: true,
        showExtensions: true,
        persistAuthorization: false,
        tryItOutEnabled: false,
        validatorUrl: null,
        presets: [SwaggerUIBundle.presets.apis],
        layout: 'BaseLayout'
      });
    })
    .catch(function (err) {
      status.textContent = 'Could not load /openapi.json: ' + err.message;
    });
})();
`;

interface Served {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  etag: string;
  cacheControl: string;
}

function served(body: Buffer, type: string, cacheControl: string): Served {
  const compressible = !type.startsWith('image/');
  return {
    body,
    gzip: compressible ? gzipSync(body) : null,
    type,
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    cacheControl,
  };
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

let files: Map<string, Served> | undefined;
/** Read once, on the first request for /docs (the bundle is 1.7 MB; most gateways never serve it). */
function docsFiles(): Map<string, Served> {
  if (files) return files;
  files = new Map<string, Served>([
    ['/docs', served(Buffer.from(PAGE), 'text/html; charset=utf-8', REVALIDATE)],
    ['/docs/init.js', served(Buffer.from(INIT), 'text/javascript; charset=utf-8', REVALIDATE)],
  ]);
  for (const [name, type] of Object.entries(ASSET_TYPES)) {
    files.set(DOCS_ASSET_PREFIX + name, served(readFileSync(path.join(packageDir, name)), type, IMMUTABLE));
  }
  return files;
}

/**
 * Answers a request for /docs, /docs/init.js or an asset. Unknown paths under /docs: 404 (the caller
 * lets it fall through to the router's not-found). Only GET and HEAD (405 with Allow otherwise).
 * Returns false when `ctx.path` is not a docs file.
 */
export function serveDocs(ctx: Koa.Context): boolean {
  const key = ctx.path === '/docs/' ? '/docs' : ctx.path;
  const file = docsFiles().get(key);
  if (!file) return false;
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new MethodNotAllowedError(ctx.method, ctx.path, ['GET', 'HEAD']);
  const gzip = file.gzip !== null && ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
  // Each content coding is its own representation with its own strong validator.
  const etag = gzip ? `${file.etag.slice(0, -1)}-gzip"` : file.etag;
  ctx.set('Cache-Control', file.cacheControl);
  ctx.set('ETag', etag);
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (key === '/docs') {
    // Scripts and styles only from this gateway; Swagger UI styles some elements inline and shows
    // data: images. Calls ("Try it out", /openapi.json) only to this origin.
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
  }
  ctx.vary('Accept-Encoding');
  ctx.type = file.type;
  const ifNoneMatch = ctx.get('if-none-match');
  if (ifNoneMatch && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) {
    ctx.status = 304;
    return true;
  }
  if (gzip) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.body;
  }
  ctx.type = file.type;
  return true;
}
