/**
 * The inbound SMTP listener (the maintained `smtp-server` package): mail for `anything@<an
 * organization's inbound host>` is accepted into that organization's inbox; other recipients are
 * refused at RCPT time (550 5.1.1). One message addressed to several organizations is accepted once
 * for each, and each copy records only that organization's recipients. Beyond 25 MiB or 20
 * attachments the message is refused at the end of DATA with 552 and recorded (inbound_refusals).
 * A storage, database or Temporal failure answers 451 (try again later): the sender keeps the
 * message and retries, and a retry of a stored message is a duplicate by its Message-ID.
 *
 * No AUTH (anyone may send mail to an inbound address, as to any MX) and no STARTTLS on this
 * listener: TLS belongs to the MX in front of it in production (docs/operations/deployment.md).
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { connectTemporal, createDb, createLogger, ObjectStorage, storageConfigFrom, type Logger } from '@rp/platform';
import type { AdminConfig } from '../config.js';
import { MAX_INBOUND_MESSAGE_BYTES } from '../domain-types/inbox.js';
import { acceptInboundMessage, InboundRefusedError, messageIdFromHead, recordRefusal, TOO_LARGE_DETAIL, type IntakeDeps } from '../domain/inbox/intake.js';
import { organizationForRecipient } from './recipients.js';

export interface InboundSmtpDeps extends IntakeDeps {
  inboundDomain: string;
  log: Logger;
}

/** An SMTP reply: smtp-server answers an Error with its responseCode and message. */
function reply(code: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode: code });
}

/** Reads a DATA stream: the bytes up to the limit (null beyond it), the size seen and the head (for the Message-ID of a refused message). */
function readData(stream: SMTPServerDataStream): Promise<{ raw: Buffer | null; size: number; head: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let head = Buffer.alloc(0);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (head.length < 65_536) head = Buffer.concat([head, chunk.subarray(0, 65_536 - head.length)]);
      if (size <= MAX_INBOUND_MESSAGE_BYTES) chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () => resolve({ raw: stream.sizeExceeded || size > MAX_INBOUND_MESSAGE_BYTES ? null : Buffer.concat(chunks), size, head }));
  });
}

/** The accepted recipients of the transaction by organization (resolved again: the envelope holds only the addresses). */
async function recipientsByOrganization(deps: InboundSmtpDeps, session: SMTPServerSession): Promise<Map<string, string[]>> {
  const byOrg = new Map<string, string[]>();
  for (const rcpt of session.envelope.rcptTo) {
    const org = await organizationForRecipient(deps, rcpt.address);
    if (org) byOrg.set(org, [...(byOrg.get(org) ?? []), rcpt.address.toLowerCase()]);
  }
  return byOrg;
}

export function createInboundSmtpServer(deps: InboundSmtpDeps, opts: { name?: string } = {}): SMTPServer {
  return new SMTPServer({
    name: opts.name,
    banner: 'Receivables Platform inbound mail',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    // Advertised in EHLO (SIZE); a client that declares more in MAIL FROM is refused there with 552, before
    // any recipient names an organization to record it for.
    size: MAX_INBOUND_MESSAGE_BYTES,
    // Each connection may hold a 25 MiB message in memory: a bound on how many at once.
    maxClients: 64,
    logger: false,
    onRcptTo(address, _session, callback) {
      organizationForRecipient(deps, address.address).then(
        (org) => callback(org ? undefined : reply(550, `5.1.1 <${address.address}>: no such recipient here`)),
        (err: unknown) => {
          deps.log.error({ err }, 'inbound SMTP: recipient look-up failed');
          callback(reply(451, '4.3.0 Temporary failure looking up the recipient; try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : null;
      void (async () => {
        const data = await readData(stream);
        const byOrg = await recipientsByOrganization(deps, session);
        if (!data.raw) {
          const messageId = messageIdFromHead(data.head);
          for (const [organizationId, envelopeTo] of byOrg) {
            await recordRefusal(deps, { organizationId, transport: 'smtp', reason: 'too_large', envelopeFrom, envelopeTo, messageId, size: data.size, attachmentCount: null, detail: TOO_LARGE_DETAIL });
          }
          throw reply(552, `5.3.4 ${TOO_LARGE_DETAIL}`);
        }
        const ids: string[] = [];
        for (const [organizationId, envelopeTo] of byOrg) {
          const accepted = await acceptInboundMessage(deps, { organizationId, raw: data.raw, transport: 'smtp', envelopeFrom, envelopeTo });
          ids.push(accepted.id);
        }
        return ids;
      })().then(
        (ids) => callback(null, `Message accepted as ${ids.join(', ')}`),
        (err: unknown) => {
          if ((err as { responseCode?: number }).responseCode) return callback(err as Error);
          if (err instanceof InboundRefusedError) return callback(reply(552, `5.3.4 ${err.detail ?? err.message}`));
          deps.log.error({ err }, 'inbound SMTP: accepting a message failed');
          callback(reply(451, '4.3.0 Temporary failure storing the message; try again later'));
        },
      );
    },
  });
}

export interface RunningInboundSmtp {
  port: number;
  close: () => Promise<void>;
}

/**
 * Starts the listener with dependencies of its own (database pool, Temporal client, object storage)
 * from the admin configuration; `port` 0 picks a free one (tests).
 */
export async function startInboundSmtp(config: AdminConfig, opts: { port: number; host?: string }): Promise<RunningInboundSmtp> {
  const log = createLogger('admin-smtp', config.LOG_LEVEL);
  const db = createDb({ url: config.DATABASE_URL, schema: 'admin', poolMax: 4, applicationName: 'admin-smtp', statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS });
  const temporal = await connectTemporal({ address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, tls: config.TEMPORAL_TLS });
  const storage = config.S3_ENDPOINT ? new ObjectStorage(storageConfigFrom(config)) : null;
  const server = createInboundSmtpServer({ db, temporal: temporal.client, storage, inboundDomain: config.MAIL_INBOUND_DOMAIN, log });
  server.on('error', (err) => log.warn({ err }, 'inbound SMTP connection error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  log.info({ port }, 'inbound SMTP listening');
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      storage?.close();
      await temporal.close();
      await db.destroy();
    },
  };
}
