#!/usr/bin/env node
/**
 * Dead-link check of the documentation: every relative link and `#anchor` in README.md and
 * docs/**\/*.md must resolve — the target file or folder exists inside the repository, and an anchor
 * into a Markdown file names one of its headings (GitHub's slugs, `-1`, `-2`… for repeated headings)
 * or an `<a id|name>` of it. Absolute URLs (`https:`, `http://localhost:8080/docs#…`, `mailto:`) are
 * not fetched: they point at running systems, not at the tree.
 *
 *   node scripts/check-doc-links.mjs [root]     # root defaults to the repository
 *
 * Exits 0 when every link resolves, 1 listing each dead link as `file:line: target — reason`.
 * Plain Node on purpose: CI runs it before `npm test`, and it needs nothing installed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Markdown files checked: README.md at the root and every .md under docs/. */
function documents(root) {
  const files = [];
  if (existsSync(path.join(root, 'README.md'))) files.push(path.join(root, 'README.md'));
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.endsWith('.md')) files.push(full);
    }
  };
  if (existsSync(path.join(root, 'docs'))) walk(path.join(root, 'docs'));
  return files.sort();
}

/** Lines outside fenced code blocks, with their 1-based numbers (links in code are examples, not links). */
function proseLines(text) {
  const out = [];
  let fence = null;
  text.split('\n').forEach((line, i) => {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (fence === null) fence = m[1][0].repeat(m[1].length);
      else if (m[1].startsWith(fence)) fence = null;
      return;
    }
    if (fence === null) out.push({ line, number: i + 1 });
  });
  return out;
}

/** GitHub's heading slug: lower case, punctuation dropped (letters, marks, digits, `_` and `-` stay), spaces → `-`. */
function slug(heading) {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

const anchorCache = new Map();

/** The anchors a Markdown file defines: heading slugs (repeats numbered as GitHub does) and HTML ids. */
function anchorsOf(file) {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map();
  for (const { line } of proseLines(readFileSync(file, 'utf8'))) {
    const h = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (h) {
      const base = slug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of line.matchAll(/<a\s[^>]*\b(?:id|name)=["']([^"']+)["']/gi)) anchors.add(a[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** Link targets of one line: inline links and images `[t](target "title")`, `<target>` forms, and reference definitions. */
function targetsOf(line) {
  const prose = line.replace(/(`+)(?:(?!\1)[\s\S])*?\1/g, (code) => ' '.repeat(code.length));
  const targets = [];
  for (const m of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g)) {
    targets.push(m[1].replace(/^<|>$/g, ''));
  }
  const def = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(prose);
  if (def) targets.push(def[1].replace(/^<|>$/g, ''));
  return targets;
}

/** Why a target is dead, or null when it resolves. */
function deadReason(root, file, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // absolute URL
  const hashAt = target.indexOf('#');
  const rawPath = hashAt >= 0 ? target.slice(0, hashAt) : target;
  const anchor = hashAt >= 0 ? target.slice(hashAt + 1) : null;
  let pathPart;
  try {
    pathPart = decodeURIComponent(rawPath.split('?')[0]);
  } catch {
    return 'not a valid percent-encoded path';
  }
  const resolved = pathPart === '' ? file : path.resolve(pathPart.startsWith('/') ? root : path.dirname(file), pathPart.replace(/^\//, ''));
  const relative = path.relative(root, resolved);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file or folder';
  if (anchor === null || anchor === '') return null;
  if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) return null; // line anchors of source files are GitHub's
  let wanted;
  try {
    wanted = decodeURIComponent(anchor).toLowerCase();
  } catch {
    return 'not a valid percent-encoded anchor';
  }
  return anchorsOf(resolved).has(wanted) ? null : `no heading #${anchor} in ${path.relative(root, resolved)}`;
}

/** Every dead link under root: `{ file, line, target, reason }`, file relative to root. */
export function findDeadLinks(root) {
  const dead = [];
  for (const file of documents(root)) {
    for (const { line, number } of proseLines(readFileSync(file, 'utf8'))) {
      for (const target of targetsOf(line)) {
        const reason = deadReason(root, file, target);
        if (reason) dead.push({ file: path.relative(root, file), line: number, target, reason });
      }
    }
  }
  return dead;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const files = documents(root);
  if (files.length === 0) {
    console.error(`check-doc-links: no README.md or docs/*.md under ${root}`);
    process.exit(1);
  }
  const dead = findDeadLinks(root);
  for (const d of dead) console.error(`${d.file}:${d.line}: ${d.target} — ${d.reason}`);
  if (dead.length > 0) {
    console.error(`check-doc-links: ${dead.length} dead link(s) in ${files.length} file(s)`);
    process.exit(1);
  }
  console.log(`check-doc-links: every relative link resolves (${files.length} files)`);
}
