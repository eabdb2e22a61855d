/**
 * Delivery of the corpus over SMTP (nodemailer as the sending client, pooled) and the bare
 * references the run is read against: the same messages only parsed in-process (postal-mime and the
 * kernel's attachmentText for every attachment: the least work an inbox must do per message), and
 * only accepted by a bare `smtp-server` that discards them (what SMTP transport costs by itself).
 */
import nodemailer from 'nodemailer';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';
import { attachmentText } from '@rp/platform';
import type { InboxLedger } from './ledger.js';
import { renderMessage } from './render.js';
import type { CorpusMessage } from './types.js';

export interface Outgoing {
  id: string;
  envelopeFrom: string;
  raw: Buffer;
}

const PLACEHOLDER = /<reminder\.(C\d+)@outbound\.placeholder\.invalid>/g;

/**
 * Each message's bytes, with the placeholder Message-ID of our reminder replaced by the one really
 * sent to that customer's address (left as is for a customer that got none: its reply then threads
 * to nothing we know, as a reply to a deleted email would).
 */
export async function prepare(messages: CorpusMessage[], ledger: InboxLedger, reminders: ReadonlyMap<string, string>): Promise<{ out: Outgoing[]; unthreaded: number }> {
  const emailOf = new Map(ledger.customers.map((c) => [c.code, c.email.toLowerCase()]));
  const out: Outgoing[] = [];
  let unthreaded = 0;
  for (const m of messages) {
    let raw = await renderMessage(m.spec);
    if (m.label.reply_to_reminder) {
      const real = reminders.get(emailOf.get(m.label.reply_to_reminder) ?? '');
      if (real) raw = Buffer.from(raw.toString('latin1').replace(PLACEHOLDER, real), 'latin1');
      else unthreaded++;
    }
    const from = m.spec.raw ? '' : m.spec.from.address;
    out.push({ id: m.label.id, envelopeFrom: from, raw });
  }
  return { out, unthreaded };
}

export interface DeliveryResult {
  sent: number;
  refused: { id: string; error: string }[];
  started_at: number;
  finished_at: number;
}

/** Sends every message to `rcpt` through the SMTP server at host:port, `connections` pooled, `inFlight` at a time. */
export async function deliver(host: string, port: number, rcpt: string, messages: Outgoing[], connections = 4, inFlight = 8): Promise<DeliveryResult> {
  const transport = nodemailer.createTransport({ host, port, secure: false, ignoreTLS: true, pool: true, maxConnections: connections, maxMessages: Infinity });
  const refused: DeliveryResult['refused'] = [];
  let next = 0;
  let sent = 0;
  const started_at = Date.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < messages.length) {
        const m = messages[next++]!;
        try {
          await transport.sendMail({ envelope: { from: m.envelopeFrom, to: [rcpt] }, raw: m.raw });
          sent++;
        } catch (err) {
          refused.push({ id: m.id, error: (err as Error).message });
        }
      }
    }),
  );
  const finished_at = Date.now();
  transport.close();
  return { sent, refused, started_at, finished_at };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Bare reference 1: parse every message and read every attachment in this process, one after the other. */
export async function bareParse(messages: Outgoing[]): Promise<{ messages: number; s: number; messages_per_s: number }> {
  const t = performance.now();
  for (const m of messages) {
    const p = await PostalMime.parse(m.raw);
    for (const a of p.attachments) {
      const content = typeof a.content === 'string' ? new TextEncoder().encode(a.content) : new Uint8Array(a.content);
      await attachmentText(content, a.mimeType, a.filename);
    }
  }
  const s = (performance.now() - t) / 1000;
  return { messages: messages.length, s: round1(s), messages_per_s: round1(messages.length / s) };
}

/** Bare reference 2: the same delivery to an in-process smtp-server that only reads and discards each message. */
export async function bareSmtp(messages: Outgoing[]): Promise<{ messages: number; s: number; messages_per_s: number }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, done) {
      stream.on('data', () => {});
      stream.on('end', () => done());
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  try {
    const r = await deliver('127.0.0.1', port, 'ar@bare.example', messages);
    if (r.refused.length) throw new Error(`bare SMTP refused ${r.refused.length}: ${r.refused[0]!.error}`);
    const s = (r.finished_at - r.started_at) / 1000;
    return { messages: messages.length, s: round1(s), messages_per_s: round1(messages.length / s) };
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
