/**
 * Mail in over HTTP: the provider endpoint (a raw MIME message, or SendGrid Inbound Parse's raw-mode
 * form) and the organization's inbound secret that authenticates it. v2.
 */
import { z } from 'zod';
import { idSchema, UnauthorizedError } from '@rp/platform';
import { route } from '../deps.js';
import { MAX_INBOUND_ATTACHMENTS, MAX_INBOUND_MESSAGE_BYTES } from '../domain-types/inbox.js';
import { acceptInboundMessage, InboundRefusedError, recordRefusal, TOO_LARGE_DETAIL } from '../domain/inbox/intake.js';
import { INBOUND_SECRET_HEADER, presentedSecret, rotateInboundSecret, verifyInboundSecret } from '../inbound/secret.js';
import { MAX_FORM_BYTES, readInboundBody } from '../inbound/http-body.js';

const inboundSecretSchema = z
  .object({
    object: z.literal('inbound_secret'),
    organization_id: z.string(),
    secret: z.string().describe('The new secret (`rpin_…`). Shown only in this answer: it is stored as a hash and cannot be read again.'),
    rotated_at: z.string().describe('When this secret replaced the previous one (ISO 8601 UTC); the previous one stopped working then.'),
    endpoint: z.string().describe('The provider endpoint of this organization: POST the mail here with the secret.'),
  })
  .meta({ id: 'InboundSecret' });

const inboundReceiptSchema = z
  .object({
    object: z.literal('inbound_email'),
    inbox_message_id: z.string().describe('The inbox message the mail is (or already was) stored as.'),
    duplicate: z.boolean().describe('true when this organization had already received a message with the same Message-ID: nothing new was stored.'),
  })
  .meta({ id: 'InboundEmailReceipt' });

const rawMessageSchema = z
  .string()
  .max(MAX_INBOUND_MESSAGE_BYTES)
  .meta({ format: 'binary', description: `The raw MIME message (RFC 5322), at most ${MAX_INBOUND_MESSAGE_BYTES} bytes.` });

const sendGridFormSchema = z
  .object({
    email: z
      .string()
      .max(MAX_INBOUND_MESSAGE_BYTES)
      .meta({ format: 'binary' })
      .describe('The raw MIME message (SendGrid Inbound Parse with "POST the raw, full MIME message" ticked); a text field or a file part.'),
    envelope: z.string().max(65_536).optional().describe('The SMTP envelope as JSON `{"to": [...], "from": "..."}`; recorded with the message when readable.'),
  })
  .describe(`Other fields SendGrid sends (to, from, subject, dkim, SPF, charsets, …) are ignored: the message itself is read. At most ${MAX_FORM_BYTES} bytes in all.`);

export const inboundRoutes = [
  route({
    method: 'post',
    path: '/v2/mailbox-settings/inbound-secret',
    operationId: 'rotateInboundSecret',
    summary: 'Issue (or rotate) the organization\'s inbound secret',
    description:
      'Admins only. Issues a new secret for the provider endpoint `POST /v2/inbound/email/{organization_id}` and answers it ONCE: ' +
      'only its SHA-256 hash is stored. The previous secret stops working at once, so update the provider with the new one. ' +
      'Mail over SMTP to the inbound host needs no secret.',
    tags: ['Organization'],
    auth: { role: 'admin' },
    response: inboundSecretSchema,
    handler: async ({ identity, deps }) => {
      const { secret, rotated_at } = await rotateInboundSecret(deps, identity.org);
      return {
        object: 'inbound_secret' as const,
        organization_id: identity.org,
        secret,
        rotated_at: rotated_at.toISOString(),
        endpoint: `${deps.config.PUBLIC_BASE_URL.replace(/\/$/, '')}/v2/inbound/email/${identity.org}`,
      };
    },
  }),
  route({
    method: 'post',
    path: '/v2/inbound/email/{organization_id}',
    operationId: 'receiveInboundEmail',
    summary: 'Receive an email for the organization (inbound-parse providers)',
    description:
      'The production path for mail providers. No bearer token: the request presents the organization\'s inbound secret (issued by ' +
      '`POST /v2/mailbox-settings/inbound-secret`) as the password of HTTP Basic (any user name; e.g. SendGrid\'s destination URL ' +
      `\`https://inbound:<secret>@<host>/v2/inbound/email/<organization id>\`) or in the \`${INBOUND_SECRET_HEADER}\` header; never in the ` +
      'query string. A missing, wrong or rotated-away secret, or an unknown organization, is 401. The gateway rate-limits this route ' +
      'per organization (429 with Retry-After beyond it); a refused secret does not spend the organization\'s budget but the client ' +
      'address\'s failed-authentication budget, past which the address gets 429 for a while.\n\n' +
      'Body: the raw message as `message/rfc822`, or SendGrid Inbound Parse\'s `multipart/form-data` in raw mode (its `email` field; ' +
      'without it 422), as sent or with `Content-Encoding` gzip, deflate or br (decoded before anything else; other encodings 415). ' +
      `Limits (of the decoded message): ${MAX_INBOUND_MESSAGE_BYTES} bytes (25 MiB) per message and ${MAX_INBOUND_ATTACHMENTS} attachments ` +
      '(every MIME part the parser reports as an attachment, inline images included); beyond either the answer is 413 ' +
      '`payload-too-large` and the refusal is recorded (without the content). The message is stored in object storage first, then ' +
      'recorded in the inbox and processed in the background (parsing, matching to a customer, acting on it). The same Message-ID ' +
      'received twice is one message: the second answer names the first with `duplicate: true`. Every answer to an accepted message ' +
      'is 200, so providers do not retry it; 503 (storage or a dependency down) stores nothing and is worth retrying.',
    tags: ['Inbox'],
    auth: { public: true },
    params: z.object({ organization_id: idSchema().describe('The organization the mail is for.') }),
    rawBody: { mediaTypes: { 'message/rfc822': rawMessageSchema, 'multipart/form-data': sendGridFormSchema } },
    response: inboundReceiptSchema,
    errors: [503],
    handler: async ({ params, deps, koa }) => {
      const organizationId = params.organization_id;
      if (!(await verifyInboundSecret(deps, organizationId, presentedSecret(koa.req.headers)))) {
        throw new UnauthorizedError(`Send the organization's inbound secret as the HTTP Basic password or in the ${INBOUND_SECRET_HEADER} header.`);
      }
      const body = await readInboundBody(koa.req);
      if (!body.raw) {
        await recordRefusal(deps, { organizationId, transport: 'http', reason: 'too_large', messageId: null, size: body.size, attachmentCount: null, detail: TOO_LARGE_DETAIL });
        throw new InboundRefusedError('too_large', TOO_LARGE_DETAIL);
      }
      const accepted = await acceptInboundMessage(deps, { organizationId, raw: body.raw, transport: 'http', envelopeFrom: body.envelopeFrom, envelopeTo: body.envelopeTo });
      return { object: 'inbound_email' as const, inbox_message_id: accepted.id, duplicate: accepted.duplicate };
    },
  }),
];
