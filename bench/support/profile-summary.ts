/**
 * A V8 CPU profile (`node --cpu-prof`, .cpuprofile) as text a reviewer can diff: total sampled time,
 * the top frames by self time and by inclusive time (a frame's own time plus everything it called,
 * each frame counted once per sample however deep it recurses), as a share of all samples.
 * `BENCH_PROFILE=<role>,… npm run bench -- gateway` writes one per profiled server to
 * bench/results/profiles/; by hand: `npx tsx bench/support/profile-summary.ts <file.cpuprofile> [self] [inclusive]`.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A frame's name: function, then its file shortened to the package (node_modules) or the repository path, and line. */
function frameKey(n: ProfileNode): string {
  const url = n.callFrame.url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, '')
    .replace(/.*?\/(packages|services|bench|scripts)\//, '$1/');
  const where = url ? ` ${url}:${n.callFrame.lineNumber + 1}` : '';
  return `${n.callFrame.functionName || '(anonymous)'}${where}`;
}

export function summarizeProfile(profile: CpuProfile, selfTop = 40, inclusiveTop = 60): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const timeOfNode = new Map<number, number>();
  profile.samples.forEach((id, i) => timeOfNode.set(id, (timeOfNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, t] of timeOfNode) {
    total += t;
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') idle += t;
    const k = frameKey(node);
    self.set(k, (self.get(k) ?? 0) + t);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const kk = frameKey(byId.get(cur)!);
      if (seen.has(kk)) continue;
      seen.add(kk);
      inclusive.set(kk, (inclusive.get(kk) ?? 0) + t);
    }
  }
  const busy = total - idle;
  const top = (m: Map<string, number>, n: number) =>
    [...m]
      .filter(([k]) => k !== '(idle)' && k !== '(root)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}% ${((100 * t) / Math.max(busy, 1)).toFixed(1).padStart(5)}%  ${k}`)
      .join('\n');
  return [
    `sampled ${(total / 1000).toFixed(0)} ms, busy (not idle) ${(busy / 1000).toFixed(0)} ms (${((100 * busy) / Math.max(total, 1)).toFixed(1)}%)`,
    'columns: share of all samples, share of busy samples (idle excluded), frame',
    `== self (top ${selfTop}) ==`,
    top(self, selfTop),
    `== inclusive (top ${inclusiveTop}) ==`,
    top(inclusive, inclusiveTop),
    '',
  ].join('\n');
}

export function summarizeProfileFile(file: string, selfTop?: number, inclusiveTop?: number): string {
  return summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, selfTop, inclusiveTop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [file, selfTop, inclusiveTop] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: npx tsx bench/support/profile-summary.ts <file.cpuprofile> [selfTop] [inclusiveTop]\n');
    process.exit(2);
  }
  process.stdout.write(summarizeProfileFile(file, selfTop ? Number(selfTop) : undefined, inclusiveTop ? Number(inclusiveTop) : undefined));
}
