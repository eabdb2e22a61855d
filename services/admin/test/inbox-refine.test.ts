// The optional language-model refinement of a reading (domain/inbox/refine.ts), against a local
// HTTP server that speaks the OpenAI chat-completions API (it stands for the model provider, as the
// SMS sink stands for the SMS provider): not configured → the rules' reading; the model's category
// wins only when it is more confident, capped at 90; bounces and header auto-replies stay; a failing,
// slow or malformed model leaves the reading as it was; the organization's guidelines are sent.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ParsedInboundMessage } from '../src/domain-types/inbox.js';
import { readMessage } from '../src/domain/inbox/reading/index.js';
import { languageModelConfig, refineReading } from '../src/domain/inbox/refine.js';

let server: Server;
let url: string;
/** what the next request is answered: a status and a body, or no answer at all */
let reply: { status: number; body: unknown } | 'hang' = { status: 200, body: {} };
const received: any[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push({ path: req.url, auth: req.headers.authorization, body: JSON.parse(data) });
      if (reply === 'hang') return;
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const answer = (content: unknown) => ({ status: 200, body: { choices: [{ message: { role: 'assistant', content: typeof content === 'string' ? content : JSON.stringify(content) } }] } });
const ctx = { today: '2026-11-27', timezone: 'Europe/Berlin' };
function message(subject: string, text: string, headers: Record<string, string> = {}): ParsedInboundMessage {
  return { messageId: '<m@x>', inReplyTo: null, references: [], from: { address: 'ap@customer.test', name: null }, to: [], cc: [], subject, date: null, headers, text, html: null, attachments: [], deliveryStatus: null, unsupported: [] };
}
const config = () => languageModelConfig({ INBOX_LLM_URL: url, INBOX_LLM_MODEL: 'test-model', INBOX_LLM_API_KEY: 'sk-test', INBOX_LLM_TIMEOUT_MS: 500 })!;

describe('language-model refinement', () => {
  const msg = message('Re: invoice 4711', 'Thanks, noted. Regarding 4711 — all fine from our side.');
  const reading = readMessage(msg, ctx);

  it('is off unless configured', async () => {
    expect(languageModelConfig({})).toBeNull();
    expect(await refineReading(null, { msg, reading, guidelines: null })).toBe(reading);
  });

  it('takes the model\'s category when it is more confident (capped at 90), sends the guidelines and the key', async () => {
    expect(reading.category).toBe('other');
    reply = answer({ category: 'question', confidence: 97, reason: 'asks for confirmation' });
    received.length = 0;
    const refined = await refineReading(config(), { msg, reading, guidelines: 'Treat "all fine" as a question to confirm.' });
    expect(refined).toMatchObject({ category: 'question', category_confidence: 90 });
    expect(refined.category_reasons[0]).toBe('Language model (test-model): question at 97 — asks for confirmation');
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ path: '/v1/chat/completions', auth: 'Bearer sk-test', body: { model: 'test-model', temperature: 0 } });
    expect(received[0].body.messages[0].content).toContain('Treat "all fine" as a question to confirm.');
    expect(received[0].body.messages[1].content).toContain('Regarding 4711');
  });

  it('keeps the rules\' category when the model is less sure, and a bounce or a header auto-reply whatever it says', async () => {
    reply = answer({ category: 'question', confidence: 30, reason: 'maybe' });
    const kept = await refineReading(config(), { msg, reading, guidelines: null });
    expect(kept.category).toBe('other');
    expect(kept.category_reasons.at(-1)).toContain("the rules' reading is more confident");
    reply = answer({ category: 'promise_to_pay', confidence: 99, reason: 'x' });
    received.length = 0;
    const auto = message('Automatic reply', 'Away.', { 'auto-submitted': 'auto-replied' });
    const autoReading = readMessage(auto, ctx);
    expect(await refineReading(config(), { msg: auto, reading: autoReading, guidelines: null })).toBe(autoReading);
    expect(received).toHaveLength(0);
  });

  it.each([
    ['an error status', { status: 500, body: { error: 'down' } }],
    ['not JSON content', answer('I think it is a question')],
    ['an unknown category', answer({ category: 'spam', confidence: 99 })],
    ['a confidence out of range', answer({ category: 'question', confidence: 400 })],
    ['no answer in time', 'hang' as const],
  ])('%s leaves the reading as it was', async (_what, r) => {
    reply = r;
    expect(await refineReading(config(), { msg, reading, guidelines: null })).toBe(reading);
  });
});
