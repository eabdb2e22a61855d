/**
 * The body of POST /v2/inbound/email/{organization_id}: a raw MIME message (`message/rfc822`), or the
 * `multipart/form-data` post of SendGrid's Inbound Parse in raw mode, whose `email` field is the
 * whole message (and `envelope` its SMTP envelope as JSON). The message's bytes are kept exactly as
 * sent: form fields are decoded as latin1 ('binary'), which maps every byte to one character and back.
 */
import { Readable, Writable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { IncomingMessage } from 'node:http';
import formidable from 'formidable';
import { UnsupportedMediaTypeError, ValidationError } from '@rp/platform';
import { MAX_INBOUND_MESSAGE_BYTES } from '../domain-types/inbox.js';

/** Room for the provider's other form fields beside the message (SendGrid's raw mode sends a few short ones). */
export const FORM_OVERHEAD_BYTES = 2 * 1024 * 1024;
/** Most bytes of a multipart body read before the message counts as too large. */
export const MAX_FORM_BYTES = MAX_INBOUND_MESSAGE_BYTES + FORM_OVERHEAD_BYTES;

export interface InboundBody {
  /** the message bytes; null when the body went beyond its limit (then `size` is at least what was seen) */
  raw: Buffer | null;
  size: number;
  envelopeFrom: string | null;
  envelopeTo: string[];
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress };

/** The body as sent, decompressed when the request names a Content-Encoding (the limits count the decoded bytes). */
function decodedBody(req: IncomingMessage): { stream: NodeJS.ReadableStream; declared: number } {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity' || encoding === '') return { stream: req, declared: Number(req.headers['content-length'] ?? 0) || 0 };
  const decoder = DECODERS[encoding];
  if (!decoder) throw new UnsupportedMediaTypeError(`Content-Encoding ${encoding.slice(0, 40)} is not supported; send the body as it is, gzip, deflate or br.`);
  const inflate = decoder();
  req.pipe(inflate);
  return { stream: inflate, declared: 0 };
}

/** Reads at most `cap` bytes; beyond it stops reading (the answer closes the connection) and reports the size seen or declared. */
function readCapped(req: IncomingMessage, cap: number): Promise<{ bytes: Buffer | null; size: number }> {
  const { stream, declared } = decodedBody(req);
  if (declared > cap) return Promise.resolve({ bytes: null, size: declared });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        stream.off('data', onData).off('end', onEnd).off('error', onError);
        stream.pause();
        resolve({ bytes: null, size: Math.max(size, declared) });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve({ bytes: Buffer.concat(chunks), size });
    // A body that does not decompress is the client's error, not ours.
    const onError = (err: Error) =>
      reject(stream === req ? err : new ValidationError([{ loc: ['body'], msg: `does not decode as its Content-Encoding: ${err.message}`, type: 'body_invalid' }]));
    stream.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** SendGrid's `envelope` field: `{"to": ["…"], "from": "…"}`; anything else is ignored. */
function readEnvelope(text: string | undefined): { from: string | null; to: string[] } {
  if (!text || text.length > 65_536) return { from: null, to: [] };
  try {
    const v = JSON.parse(text) as { from?: unknown; to?: unknown };
    const from = typeof v.from === 'string' && v.from.length <= 320 ? v.from : null;
    const to = Array.isArray(v.to) ? v.to.filter((a): a is string => typeof a === 'string' && a.length <= 320).slice(0, 100) : [];
    return { from, to };
  } catch {
    return { from: null, to: [] };
  }
}

async function parseForm(body: Buffer, headers: IncomingMessage['headers']): Promise<{ email: Buffer | null; envelope: string | undefined }> {
  const fileChunks: Buffer[] = [];
  let fileSeen = false;
  const form = formidable({
    // 'binary' (Node's latin1) both as the parts' default transfer encoding and as the field decoder: bytes survive as they are
    encoding: 'binary',
    maxFields: 100,
    maxFieldsSize: MAX_FORM_BYTES,
    maxFiles: 1,
    maxFileSize: MAX_FORM_BYTES,
    maxTotalFileSize: MAX_FORM_BYTES,
    allowEmptyFiles: true,
    minFileSize: 0,
    // Only an `email` file part is kept (some clients post the message as a file), in memory.
    filter: (part) => part.name === 'email',
    fileWriteStreamHandler: () => {
      fileSeen = true;
      return new Writable({
        write(chunk: Buffer, _enc, cb) {
          fileChunks.push(chunk);
          cb();
        },
      });
    },
  });
  // The decoded body: its own length, whatever the request's Content-Length and Content-Encoding said.
  const req = Object.assign(Readable.from([body]), { headers: { 'content-type': headers['content-type'], 'content-length': String(body.length) } });
  let fields: formidable.Fields;
  try {
    [fields] = await form.parse(req as unknown as IncomingMessage);
  } catch (err) {
    throw new ValidationError([{ loc: ['body'], msg: `Unreadable multipart/form-data body: ${(err as Error).message}`, type: 'body_invalid' }]);
  }
  const field = fields.email?.[0];
  const email = field !== undefined ? Buffer.from(field, 'latin1') : fileSeen ? Buffer.concat(fileChunks) : null;
  return { email, envelope: fields.envelope?.[0] };
}

/** Reads the request body as the route's media types allow (the kit already refused others with 415). */
export async function readInboundBody(req: IncomingMessage): Promise<InboundBody> {
  const multipart = /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
  const { bytes, size } = await readCapped(req, multipart ? MAX_FORM_BYTES : MAX_INBOUND_MESSAGE_BYTES);
  if (!bytes) return { raw: null, size, envelopeFrom: null, envelopeTo: [] };
  if (!multipart) {
    if (!bytes.length) throw new ValidationError([{ loc: ['body'], msg: 'is empty: send the raw MIME message', type: 'missing' }]);
    return { raw: bytes, size, envelopeFrom: null, envelopeTo: [] };
  }
  const { email, envelope } = await parseForm(bytes, req.headers);
  if (!email?.length) {
    throw new ValidationError([
      { loc: ['body', 'email'], msg: 'is required: the raw MIME message (in SendGrid Inbound Parse, tick "POST the raw, full MIME message")', type: 'missing' },
    ]);
  }
  const env = readEnvelope(envelope);
  return { raw: email, size: email.length, envelopeFrom: env.from, envelopeTo: env.to };
}
