/**
 * The inbox's parse stage, end to end: a raw message received by an organization is stored, read by
 * the inbox workflow (admin worker) and shown by GET /v2/inbox/messages/{id} through the gateway —
 * charsets and quoted-printable, base64 bodies, HTML-only bodies as text, nested multiparts with an
 * attachment stored as its own object (fetched back through its presigned URL), messages forwarded
 * as attachments and inline, TNEF reported unsupported, and a delivery-status notification. Every
 * message is delivered over SMTP (nodemailer) to the stack's inbound listener.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTemporal } from '@rp/platform';
import { inboxMessageWorkflowId } from '@rp/workflows';
import { replayHistory } from './support/histories.js';
import { compose, rawMessage, receive } from './support/inbox.js';
import { startStack, type Org, type TestStack } from './support/stack.js';

let stack: TestStack;
let org: Org;
let n = 0;
const mid = () => `<parse-${Date.now()}-${n++}@customer.example>`;

beforeAll(async () => {
  stack = await startStack({ workers: ['admin'] });
  org = await stack.onboard('Parse Org');
});

afterAll(async () => {
  await stack?.close();
});

describe('parsing received mail', () => {
  it('decodes ISO-8859-1 quoted-printable bodies and encoded-word subjects', async () => {
    const raw = rawMessage(
      [
        'From: =?ISO-8859-1?Q?J=FCrgen_M=FCller?= <juergen@kunde.example>',
        'To: ar@inbound.example',
        'Subject: =?ISO-8859-1?Q?Zahlung_f=FCr_Rechnung_4711?=',
        `Message-ID: ${mid()}`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=ISO-8859-1',
        'Content-Transfer-Encoding: quoted-printable',
      ],
      'Sehr geehrte Damen und Herren,\n\ndie Zahlung f=FCr Rechnung 4711 =E4ndert sich nicht. Gr=FC=DFe\n',
    );
    const m = await receive(stack, org, raw);
    expect(m.processing_state, JSON.stringify(m)).toBe('processed');
    expect(m.subject).toBe('Zahlung für Rechnung 4711');
    expect(m.from).toEqual({ address: 'juergen@kunde.example', name: 'Jürgen Müller' });
    expect(m.text).toContain('die Zahlung für Rechnung 4711 ändert sich nicht. Grüße');
    // the workflow's history replays against today's code (RECORD_HISTORIES=1 records it)
    const t = await connectTemporal({ address: stack.env.TEMPORAL_ADDRESS!, namespace: stack.namespace });
    try {
      const handle = t.client.workflow.getHandle(inboxMessageWorkflowId(m.id));
      expect(await handle.result()).toBe('processed');
      await replayHistory(stack, handle.workflowId, await handle.fetchHistory(), 'inbox-message.json');
    } finally {
      await t.close();
    }
  });

  it('decodes base64 UTF-8 bodies', async () => {
    const body = Buffer.from('Bonjour,\nPouvez-vous renvoyer la facture 4711 (montant 1 234,56 €) à notre service ? Merci, à bientôt.\n', 'utf8').toString('base64').replace(/(.{76})/g, '$1\n');
    const raw = rawMessage(
      ['From: compta@client.example', 'To: ar@inbound.example', 'Subject: Question sur la facture', `Message-ID: ${mid()}`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', 'Content-Transfer-Encoding: base64'],
      body,
    );
    const m = await receive(stack, org, raw);
    expect(m.text).toContain('Pouvez-vous renvoyer la facture 4711 (montant 1 234,56 €) à notre service ? Merci, à bientôt.');
  });

  it('reads an HTML-only body as text, its table as rows and without markup', async () => {
    const raw = await compose({
      from: 'ap@html.example',
      to: 'ar@inbound.example',
      subject: 'Our contacts',
      messageId: mid(),
      html: '<html><head><style>td{color:red}</style></head><body><p>Dear team,</p><table><tr><th>Contact</th><th>Phone</th></tr><tr><td>Kim</td><td>+49 30 1234</td></tr><tr><td>Lee</td><td>+49 30 5678</td></tr></table><script>alert(1)</script></body></html>',
    });
    const m = await receive(stack, org, raw);
    expect(m.text).toContain('Dear team,');
    expect(m.text).toMatch(/Contact\s+Phone\nKim\s+\+49 30 1234\nLee\s+\+49 30 5678/);
    expect(m.text).not.toMatch(/<|color:red|alert/);
  });

  it('takes the plain alternative of a nested multipart and stores its attachment as its own object', async () => {
    const csv = 'Contact;Phone\nKim;+49 30 1234\nLee;+49 30 5678\n';
    const raw = await compose({
      from: 'ap@nested.example',
      to: 'ar@inbound.example',
      subject: 'Our contacts',
      messageId: mid(),
      text: 'Please find our contact list attached.',
      html: '<p>Please find our <b>contact list</b> attached (HTML version).</p>',
      attachments: [{ filename: 'contacts.csv', content: csv, contentType: 'text/csv' }],
    });
    const m = await receive(stack, org, raw);
    expect(m.text).toBe('Please find our contact list attached.');
    expect(m.attachments).toHaveLength(1);
    const a = m.attachments[0];
    expect(a).toMatchObject({ object: 'attachment', name: 'contacts.csv', mime_type: 'text/csv', size: Buffer.byteLength(csv), purpose: 'inbox_message', file_type: 'text', is_verified: true });
    const fetched = await fetch(a.presigned_url);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe(csv);
  });

  it('includes forwarded messages in the text: an inline message/rfc822 part, one attached as a file, and an inline "Forwarded message" block', async () => {
    const inline = await compose({ from: 'Kim Payer <kim@payer.example>', to: 'ap@payer.example', subject: 'Copy of invoice 4711', messageId: mid(), text: 'Could you send us a copy of invoice 4711?' });
    const attached = await compose({ from: 'Sam Payer <sam@payer.example>', to: 'ap@payer.example', subject: 'Address change', messageId: mid(), html: '<p>Our <b>address</b> changes next month.</p>' });
    const raw = await compose({
      from: 'assistant@payer.example',
      to: 'ar@inbound.example',
      subject: 'Fwd: for you',
      messageId: mid(),
      text: 'See below.\n\n---------- Forwarded message ---------\nFrom: Lee <lee@payer.example>\nSubject: earlier\n\nInline forwarded words.',
      attachments: [
        { filename: 'inline.eml', content: inline, contentType: 'message/rfc822' },
        { filename: 'attached.eml', content: attached, contentType: 'message/rfc822', contentDisposition: 'attachment' },
      ],
    });
    const m = await receive(stack, org, raw);
    expect(m.text).toContain('Inline forwarded words.');
    // the inline part (postal-mime's own block) and the attached one (a "Forwarded message" block of its own)
    expect(m.text).toMatch(/From:\s+Kim Payer <kim@payer\.example>\nSubject: Copy of invoice 4711/);
    expect(m.text).toContain('Could you send us a copy of invoice 4711?');
    expect(m.text).toContain('---------- Forwarded message ----------\nFrom: Sam Payer <sam@payer.example>');
    expect(m.text).toContain('Subject: Address change');
    expect(m.text).toContain('Our address changes next month.');
    // the file forwarded as an attachment stays one
    expect(m.attachments.map((a: any) => [a.name, a.mime_type])).toEqual([['attached.eml', 'message/rfc822']]);
  });

  it('reports a TNEF attachment (winmail.dat) as unsupported and keeps it', async () => {
    const raw = await compose({
      from: 'outlook@tnef.example',
      to: 'ar@inbound.example',
      subject: 'Documents attached',
      messageId: mid(),
      text: 'Attached.',
      attachments: [{ filename: 'winmail.dat', content: Buffer.from([0x78, 0x9f, 0x3e, 0x22, 0x01, 0x00]), contentType: 'application/ms-tnef' }],
    });
    const m = await receive(stack, org, raw);
    expect(m.processing_state).toBe('processed');
    expect(m.unsupported).toHaveLength(1);
    expect(m.unsupported[0].kind).toBe('tnef');
    expect(m.unsupported[0].detail).toContain('winmail.dat');
    expect(m.attachments.map((a: any) => a.name)).toEqual(['winmail.dat']);
  });

  it('reads a delivery-status notification as a bounce without storing the report part', async () => {
    const raw = rawMessage(
      [
        'From: Mail Delivery System <MAILER-DAEMON@mx.customer.example>',
        'To: collections@our.example',
        'Subject: Undelivered Mail Returned to Sender',
        `Message-ID: ${mid()}`,
        'MIME-Version: 1.0',
        'Content-Type: multipart/report; report-type=delivery-status; boundary="B"',
      ],
      [
        '--B',
        'Content-Type: text/plain',
        '',
        'Your message could not be delivered.',
        '--B',
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; mx.customer.example',
        '',
        'Final-Recipient: rfc822; gone@customer.example',
        'Action: failed',
        'Status: 5.1.1',
        'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
        '',
        '--B',
        'Content-Type: text/rfc822-headers',
        '',
        'Subject: Reminder',
        '--B--',
        '',
      ].join('\n'),
    );
    const m = await receive(stack, org, raw);
    expect(m.category).toBe('bounce');
    expect(m.text).toContain('Your message could not be delivered.');
    expect(m.attachments.map((a: any) => a.mime_type)).toEqual(['text/rfc822-headers']);
  });
});
