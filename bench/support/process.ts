import { readFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { stopChild } from '../../scripts/local/components.js';

/**
 * Node flags a server runs with as deployed (docker-compose.yml `command`), so that the benchmark
 * measures the deployed process: the integrations API (the middleware push endpoints) runs with a
 * 64 MB young-generation semi-space, which lets a push batch's short-lived objects (request JSON,
 * validated records, the statement's JSON parameter) die young instead of being promoted (its CPU
 * per pushed record drops by about a sixth; see bench/results/push.json).
 */
export const DEPLOYED_NODE_FLAGS: Record<string, string[]> = { 'integrations-api': ['--max-semi-space-size=64'] };

/** Start bench/support/serve.ts in its own process (its own core) and wait for its port. */
export async function serveInChild(
  role: string,
  env: Record<string, string>,
  opts: { profileDir?: string } = {},
): Promise<{ port: number; child: ChildProcess; stop: () => Promise<void> }> {
  // BENCH_PROFILE=<role>[,<role>…] writes V8 CPU profiles of that server to var/bench/profiles/ (or
  // `profileDir`) when it stops: one per thread, CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile,
  // the main thread's numbered 0 (tsx's module loader runs on a thread of its own).
  const profile = (process.env.BENCH_PROFILE ?? '').split(',').includes(role) ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir ?? 'var/bench/profiles'}`] : [];
  const child = spawn(process.execPath, [...profile, ...(DEPLOYED_NODE_FLAGS[role] ?? []), '--import', 'tsx', 'bench/support/serve.ts', role], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^LISTENING (\d+)$/.exec(line.trim());
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
  return { port, child, stop: () => stopChild(child) };
}

/** CPU time (user + system, ms) a process has used so far (Linux /proc; null elsewhere). */
export function cpuMsOf(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[11], fields[12]: utime, stime in clock ticks (fields 14 and 15 of proc(5)); USER_HZ is 100 on Linux.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) the whole machine has been busy so far, every core and process and the kernel's own
 * work (Linux /proc/stat: user, nice, system, irq, softirq, steal); null elsewhere. Per request it tells
 * what one request costs the machine, load generator and database included.
 */
export function machineBusyMs(): number | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields as number[];
    return ((user! + nice! + system! + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1000) / 100;
  } catch {
    return null;
  }
}
