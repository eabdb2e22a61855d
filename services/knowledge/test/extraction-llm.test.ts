/**
 * The optional LLM refiner against a fake OpenAI-compatible server on loopback speaking the documented
 * chat-completions shape (POST {base}/chat/completions → {id, object: "chat.completion", created,
 * model, choices: [{index, message: {role: "assistant", content}, finish_reason}], usage}).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llmConfigFromEnv, llmRefinerFromEnv, LlmRefiner } from '../src/extraction/llm.js';
import { splitMemories } from '../src/extraction/memories.js';
import type { ProposalDraft } from '../src/extraction/types.js';

interface Seen {
  path: string;
  auth: string | undefined;
  body: { model: string; messages: { role: string; content: string }[]; response_format?: { type: string } };
}

let server: Server;
let base: string;
const seen: Seen[] = [];
/** the next answers' content (a JSON string), or a status code to fail with */
const answers: (string | number)[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(raw) as Seen['body'] });
      const next = answers.shift() ?? 500;
      if (typeof next === 'number') {
        res.writeHead(next, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'fake failure', type: 'server_error' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${seen.length}`,
          object: 'chat.completion',
          created: 1_700_000_000,
          model: 'fake-model',
          choices: [{ index: 0, message: { role: 'assistant', content: next }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const refiner = () => new LlmRefiner({ baseUrl: base, apiKey: 'test-key', model: 'fake-model', timeoutMs: 5_000 });

const PAGE = { page: 1, text: 'Acme Foods pays by ACH. Globex Retail pays by check.\n1. Call the customer.\n2. Send a reminder.' };

describe('LLM refiner', () => {
  it('is off unless LLM_BASE_URL is set', () => {
    expect(llmRefinerFromEnv({})).toBeNull();
    expect(llmConfigFromEnv({ LLM_BASE_URL: base })).toEqual({ baseUrl: base, apiKey: 'none', model: 'gpt-4o-mini', timeoutMs: 60_000 });
    expect(llmRefinerFromEnv({ LLM_BASE_URL: base })).toBeInstanceOf(LlmRefiner);
  });

  it('splits with the model when every excerpt is verbatim (offsets located in the page)', async () => {
    seen.length = 0;
    answers.push(JSON.stringify({ memories: [
      { excerpt: 'Acme Foods pays by ACH. Globex Retail pays by check.', knowledge_type: 'declarative' },
      { excerpt: '1. Call the customer.\n2. Send a reminder.', knowledge_type: 'procedural' },
    ] }));
    const drafts = await refiner().refineSplit([PAGE], splitMemories([PAGE]));
    expect(drafts.map((d) => [d.knowledge_type, d.start, d.end])).toEqual([
      ['declarative', 0, 52],
      ['procedural', 53, PAGE.text.length],
    ]);
    for (const d of drafts) expect(PAGE.text.slice(d.start, d.end)).toBe(d.excerpt);
    expect(seen[0]!.path).toBe('/v1/chat/completions');
    expect(seen[0]!.auth).toBe('Bearer test-key');
    expect(seen[0]!.body.model).toBe('fake-model');
    expect(seen[0]!.body.response_format).toEqual({ type: 'json_object' });
    expect(seen[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: PAGE.text });
  });

  it('keeps the offline split when the model invents text, answers malformed JSON or fails', async () => {
    const offline = splitMemories([PAGE]);
    answers.push(JSON.stringify({ memories: [{ excerpt: 'Acme Foods always pays on time.', knowledge_type: 'declarative' }] }));
    expect(await refiner().refineSplit([PAGE], offline)).toEqual(offline);
    answers.push('not json');
    expect(await refiner().refineSplit([PAGE], offline)).toEqual(offline);
    answers.push(500, 500);
    expect(await refiner().refineSplit([PAGE], offline)).toEqual(offline);
  });

  it('takes a title and description only when they are extractive', async () => {
    const proposal: ProposalDraft = {
      key: 'k', action: 'create', article_id: null, collection: 'payments', knowledge_type: 'declarative', customer_id: null, segment_id: null,
      title: 'Acme Foods pays', description: 'Acme Foods pays by ACH.', content: 'Acme Foods pays by ACH on the 15th.',
      source_excerpts: [{ text: 'Acme Foods pays by ACH on the 15th.', memory_id: 'm1', page: 1 }],
    };
    answers.push(JSON.stringify({ title: 'ACH on the 15th', description: 'Acme Foods pays by ACH on the 15th.' }));
    expect(await refiner().refineTitles([proposal])).toEqual([{ ...proposal, title: 'ACH on the 15th', description: 'Acme Foods pays by ACH on the 15th.' }]);
    answers.push(JSON.stringify({ title: 'Payment habits of a loyal customer', description: 'Acme Foods pays by ACH on the 15th.' }));
    expect((await refiner().refineTitles([proposal]))[0]!.title).toBe('Acme Foods pays');
  });
});
