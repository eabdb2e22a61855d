/**
 * The processes of the launcher's tree as /proc shows them (so the suite finds them whatever
 * supervises them): one process's parent, owner and command line, every live descendant of a pid.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface Proc {
  pid: number;
  ppid: number;
  uid: number;
  gid: number;
  argv: string[];
}

export function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (state === 'Z') return null; // a zombie is gone
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    const gid = Number(/^Gid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    return { pid, ppid, uid, gid, argv };
  } catch {
    return null;
  }
}

/** Every live process below `root` (children, grandchildren…). */
export function descendants(root: number): Proc[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readProc(Number(d)))
    .filter((p): p is Proc => p !== null);
  const byParent = new Map<number, Proc[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: Proc[] = [];
  const queue = [root];
  while (queue.length) {
    for (const c of byParent.get(queue.shift()!) ?? []) {
      out.push(c);
      queue.push(c.pid);
    }
  }
  return out;
}

export const alive = (pid: number) => readProc(pid) !== null;
