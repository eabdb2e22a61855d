/**
 * The embedded components start on ports picked as free, side by side with a Temporal dev server
 * that takes random ports of its own. A CI run failed before any test ran: a port picked for
 * MailDev was taken before MailDev bound it ("MailDev web exited with code 1 before listening"),
 * and the whole run reported "No test files found". A server whose picked port was taken must
 * start again on fresh ones; a port the caller fixed is never changed, and its failure says why.
 */
import net from 'node:net';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitedBeforeListening, freePorts, startEmbeddedPostgres, startMailDev, startOnFreePorts } from '../scripts/local/components.js';
import pg from 'pg';

let squatter: net.Server;
const sockets = new Set<net.Socket>();
let taken: number;
const dirs: string[] = [];

beforeAll(async () => {
  squatter = net.createServer();
  // a component that connects to the taken port keeps its socket open; close() waits for every one
  squatter.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  taken = (squatter.address() as net.AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => squatter.close(() => resolve()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A picker whose first answer contains the taken port (as a race would), then real free ports. */
function racingPicker(takenIndex: number) {
  const calls: number[][] = [];
  const pick = async (n: number) => {
    const ports = await freePorts(n);
    if (calls.length === 0) ports[takenIndex] = taken;
    calls.push(ports);
    return ports;
  };
  return { pick, calls };
}

async function smtpGreets(url: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString());
    });
    socket.once('error', reject);
  });
}

describe('MailDev', () => {
  it('starts again on fresh ports when its picked web port was taken before the bind', async () => {
    const { pick, calls } = racingPicker(1);
    const mail = await startMailDev({ pickPorts: pick });
    try {
      expect(calls.length).toBe(2);
      expect(new URL(mail.webUrl).port).not.toBe(String(taken));
      expect(await smtpGreets(mail.smtpUrl)).toMatch(/^220 /);
      const res = await fetch(`${mail.webUrl}/email`);
      expect(res.status).toBe(200);
    } finally {
      await mail.stop();
    }
  });
});

describe('PostgreSQL', () => {
  it('starts again on a fresh port when its picked port was taken before the bind', async () => {
    // Under var/ like the test run's own: initdb runs as the postgres user when the tests run as root.
    const dir = path.resolve('var', 'test', `components-${process.pid}`);
    mkdirSync(dir, { recursive: true });
    dirs.push(dir);
    const { pick, calls } = racingPicker(0);
    const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), persistent: false, pickPorts: pick });
    try {
      expect(calls.length).toBe(2);
      expect(server.port).not.toBe(taken);
      const client = new pg.Client({ connectionString: server.url('postgres') });
      await client.connect();
      const { rows } = await client.query('SELECT 1 + 1 AS two');
      await client.end();
      expect(rows[0].two).toBe(2);
    } finally {
      await server.stop();
    }
  });
});

describe('ports the caller fixed', () => {
  it('are never changed: a server that exits on them fails at once', async () => {
    const tried: number[][] = [];
    const start = async (ports: number[]) => {
      tried.push(ports);
      throw new ExitedBeforeListening('exited with code 1 before listening');
    };
    await expect(startOnFreePorts(1, start, { fixed: true })).rejects.toThrow(/before listening/);
    expect(tried.length).toBe(1);
    await expect(startOnFreePorts(1, start)).rejects.toThrow(/before listening/);
    expect(tried.length).toBe(1 + 4);
  });

  it('a failure other than exiting before listening is not retried', async () => {
    let calls = 0;
    const start = async () => {
      calls++;
      throw new Error('binary not found');
    };
    await expect(startOnFreePorts(1, start)).rejects.toThrow('binary not found');
    expect(calls).toBe(1);
  });
});
