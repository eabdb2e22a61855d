import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { stopChild } from '../../scripts/local/components.js';

/** Start bench/support/serve.ts in its own process (its own core) and wait for its port. */
export async function serveInChild(role: string, env: Record<string, string>): Promise<{ port: number; child: ChildProcess; stop: () => Promise<void> }> {
  // BENCH_PROFILE=<role> writes a V8 CPU profile of that server to var/bench/profiles/ when it stops.
  const profile = process.env.BENCH_PROFILE === role ? ['--cpu-prof', '--cpu-prof-dir=var/bench/profiles'] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', 'bench/support/serve.ts', role], {
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
