// A worker killed at the worst moment of an email send, reproduced deterministically: after the SMTP
// server accepted the message and before the activity's completion reached Temporal.
//
// - `smtpGate`: a TCP proxy in front of the real SMTP sink (MailDev) that, when armed, holds the
//   server's answer to the end of a message's DATA (the "250 accepted"): the sink has the message,
//   the worker does not know it yet.
// - While it is held, the test fails that activity attempt in Temporal (RespondActivityTaskFailedById),
//   which is what Temporal does to the attempt of a killed worker once its timeout passes: the
//   attempt is over and its completion, when it comes, is discarded; the retry policy schedules the
//   next attempt. Then the answer is released: the old attempt goes on exactly as far as a worker
//   killed right after it got "250" would have, with its completion lost.
// - The worker runs one activity at a time, so the next attempt starts only after the old attempt's
//   code has returned (ordering, not timing).
import net from 'node:net';
import { inject } from 'vitest';
import { startServiceWorker, type CommonConfig, type RunningWorker, type ServiceModule, type TemporalHandle } from '@rp/platform';
import { workflowsPath } from '@rp/workflows/paths';
import { SERVICE_MODULES } from '../../scripts/local/services.js';
import type { TestStack } from './stack.js';

export interface SmtpGate {
  url: string;
  /** Holds the server's answer to the end of the next message's data to `rcpt`; resolves once that answer is held. */
  holdNextAcceptance(rcpt: string): Promise<void>;
  /** Passes the held answer on and stops holding. */
  release(): void;
  close(): Promise<void>;
}

export async function smtpGate(target: string): Promise<SmtpGate> {
  const { hostname, port } = new URL(target);
  let armed: { rcpt: string; resolve: () => void } | null = null;
  let held: { client: net.Socket; chunks: Buffer[] } | null = null;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let sent = ''; // what the client sent, up to the end of its first message (commands and data)
    let dataEnded = false;
    client.on('data', (chunk) => {
      if (!dataEnded) {
        sent += chunk.toString('latin1');
        dataEnded = sent.includes('\r\n.\r\n');
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (held?.client === client) return void held.chunks.push(chunk);
      if (dataEnded && armed && sent.toLowerCase().includes(`rcpt to:<${armed.rcpt.toLowerCase()}>`)) {
        held = { client, chunks: [chunk] };
        const { resolve } = armed;
        armed = null;
        return resolve();
      }
      client.write(chunk);
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `smtp://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    holdNextAcceptance: (rcpt) => new Promise<void>((resolve) => (armed = { rcpt, resolve })),
    release() {
      const h = held;
      held = null;
      if (h) for (const c of h.chunks) h.client.write(c);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The service's worker, sending through `smtpUrl`, running one activity at a time. */
export async function startOneSlotWorker(stack: TestStack, name: 'admin' | 'cash-app', smtpUrl: string): Promise<RunningWorker> {
  const entry = SERVICE_MODULES[name];
  const mod = entry.module as ServiceModule<CommonConfig, unknown>;
  return startServiceWorker({ ...mod, worker: { ...mod.worker, maxConcurrentActivityTaskExecutions: 1 } }, entry.config({ ...stack.env, SMTP_URL: smtpUrl }), {
    workflowsPath,
    workflowBundlePath: inject('workflowBundlePath'),
  });
}

/** Ends the running attempt of the workflow's pending activity `activityType` as a killed worker's attempt ends: failed, retryable. */
export async function failRunningAttempt(temporal: TemporalHandle, namespace: string, workflowId: string, activityType: string): Promise<number> {
  const handle = temporal.client.workflow.getHandle(workflowId);
  const { raw } = await handle.describe();
  const pending = (raw.pendingActivities ?? []).find((a) => a.activityType?.name === activityType);
  if (!pending?.activityId) throw new Error(`${workflowId} has no pending ${activityType}`);
  await temporal.connection.workflowService.respondActivityTaskFailedById({
    namespace,
    workflowId,
    runId: raw.workflowExecutionInfo?.execution?.runId ?? '',
    activityId: pending.activityId,
    identity: 'test: worker killed after the SMTP server accepted',
    failure: { message: 'the worker was killed (test)', applicationFailureInfo: { type: 'WorkerKilled', nonRetryable: false } },
  });
  return pending.attempt ?? 0;
}

/** A loopback SMTP server that refuses every recipient (550), as a real server does for an unknown mailbox. */
export async function rejectingSmtp(): Promise<{ port: number; close: () => Promise<void> }> {
  const server = net.createServer((socket) => {
    socket.write('220 reject.test ESMTP\r\n');
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      let i: number;
      while ((i = buffer.indexOf('\r\n')) >= 0) {
        const cmd = buffer.slice(0, i).toUpperCase();
        buffer = buffer.slice(i + 2);
        if (cmd.startsWith('EHLO') || cmd.startsWith('HELO')) socket.write('250 reject.test\r\n');
        else if (cmd.startsWith('MAIL FROM')) socket.write('250 OK\r\n');
        else if (cmd.startsWith('RCPT TO')) socket.write('550 5.1.1 Mailbox unavailable\r\n');
        else if (cmd.startsWith('QUIT')) socket.end('221 Bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as { port: number }).port, close: () => new Promise<void>((r) => server.close(() => r())) };
}
