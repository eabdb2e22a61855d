/**
 * The API reference page at /docs: a self-contained page (no CDN; this platform runs where the
 * internet may not be reachable) that renders /openapi.json.
 */
export const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Receivables Platform API reference</title>
<style>
  :root { --fg:#1d2330; --muted:#5b6475; --line:#e3e6ec; --bg:#f7f8fa; --accent:#2457c5; }
  * { box-sizing: border-box; }
  body { margin:0; font:15px/1.5 system-ui, -apple-system, Segoe UI, Roboto, sans-serif; color:var(--fg); background:#fff; }
  header { padding:24px 32px; border-bottom:1px solid var(--line); background:var(--bg); }
  header h1 { margin:0 0 4px; font-size:22px; }
  header p { margin:4px 0; color:var(--muted); white-space:pre-line; max-width:980px; }
  main { display:grid; grid-template-columns:260px 1fr; }
  nav { border-right:1px solid var(--line); padding:16px; position:sticky; top:0; height:100vh; overflow:auto; font-size:13px; }
  nav h3 { margin:16px 0 6px; font-size:12px; text-transform:uppercase; color:var(--muted); }
  nav a { display:block; color:var(--fg); text-decoration:none; padding:2px 0; }
  section.op { padding:20px 32px; border-bottom:1px solid var(--line); }
  .method { display:inline-block; min-width:64px; text-align:center; font-weight:700; font-size:12px; padding:3px 8px; border-radius:4px; color:#fff; text-transform:uppercase; }
  .get{background:#2f855a}.post{background:#2457c5}.put{background:#b7791f}.patch{background:#805ad5}.delete{background:#c53030}
  code.path { font-size:15px; margin-left:8px; }
  table { border-collapse:collapse; margin:8px 0; font-size:13px; }
  td, th { border:1px solid var(--line); padding:4px 8px; text-align:left; vertical-align:top; }
  pre { background:var(--bg); border:1px solid var(--line); padding:10px; overflow:auto; font-size:12px; max-height:360px; }
  .muted { color:var(--muted); }
  #status { padding:32px; }
</style>
</head>
<body>
<header><h1 id="title">Receivables Platform API</h1><p id="desc" class="muted"></p></header>
<main><nav id="nav"></nav><div id="ops"><div id="status">Loading /openapi.json…</div></div></main>
<script>
const esc = (s) => String(s ?? '').replace(/[&<>"]/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
fetch('/openapi.json').then((r) => r.json()).then((doc) => {
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  document.getElementById('desc').textContent = doc.info.description || '';
  const byTag = {};
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = (op.tags && op.tags[0]) || 'Other';
      (byTag[tag] = byTag[tag] || []).push({ path, method, op });
    }
  }
  let nav = '', html = '';
  for (const tag of Object.keys(byTag).sort()) {
    nav += '<h3>' + esc(tag) + '</h3>';
    for (const { path, method, op } of byTag[tag]) {
      const id = op.operationId;
      nav += '<a href="#' + esc(id) + '"><b>' + method.toUpperCase() + '</b> ' + esc(path) + '</a>';
      html += '<section class="op" id="' + esc(id) + '"><div><span class="method ' + method + '">' + method + '</span><code class="path">' + esc(path) + '</code></div>';
      html += '<h2>' + esc(op.summary) + '</h2><p>' + esc(op.description).replace(/\\n/g, '<br>') + '</p>';
      if (op.parameters && op.parameters.length) {
        html += '<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th><th>description</th></tr>';
        for (const p of op.parameters) html += '<tr><td><code>' + esc(p.name) + '</code></td><td>' + esc(p.in) + '</td><td>' + (p.required ? 'yes' : 'no') + '</td><td><code>' + esc(JSON.stringify(p.schema)) + '</code></td><td>' + esc(p.description) + '</td></tr>';
        html += '</table>';
      }
      if (op.requestBody) for (const [type, media] of Object.entries(op.requestBody.content)) html += '<h4>Request body (' + esc(type) + ')</h4><pre>' + esc(JSON.stringify(media.schema, null, 2)) + '</pre>';
      html += '<h4>Responses</h4><table><tr><th>status</th><th>meaning</th></tr>';
      for (const [status, r] of Object.entries(op.responses)) html += '<tr><td>' + esc(status) + '</td><td>' + esc(r.description) + '</td></tr>';
      html += '</table>';
      const ok = Object.entries(op.responses).find(([s]) => s.startsWith('2'));
      if (ok && ok[1].content) html += '<details><summary>Success body schema</summary><pre>' + esc(JSON.stringify(ok[1].content['application/json'].schema, null, 2)) + '</pre></details>';
      html += '</section>';
    }
  }
  document.getElementById('nav').innerHTML = nav;
  document.getElementById('ops').innerHTML = html;
}).catch((e) => { document.getElementById('status').textContent = 'Could not load /openapi.json: ' + e; });
</script>
</body>
</html>`;
