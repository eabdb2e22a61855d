/**
 * The optional language-model refinement of a deterministic reading: when the deployment names an
 * OpenAI-compatible chat-completions endpoint (INBOX_LLM_URL + INBOX_LLM_MODEL), the message, the
 * rules' reading and the organization's `matching_guidelines` are sent to it and it answers a
 * category with a confidence and a reason. It is never required: without configuration, or when the
 * model fails, times out or answers something unusable, the deterministic reading stands as it is.
 *
 * How its answer is used: a bounce and a header-signalled auto-reply stay as the rules read them
 * (they are facts of the message, not of its wording); otherwise the model's category replaces the
 * rules' only when its confidence is higher, and its confidence is then capped at 90 (a model's
 * word alone never reaches certainty). Promises and disputes are still read by the rules, so the
 * actor acts only on what the rules read; the model changes the category and its reasons.
 */
import { INBOX_CATEGORIES, type InboxCategory, type MessageReading, type ParsedInboundMessage } from '../../domain-types/inbox.js';

export interface LanguageModelConfig {
  /** base URL of an OpenAI-compatible API, e.g. https://api.openai.com/v1 */
  url: string;
  model: string;
  apiKey: string | null;
  timeoutMs: number;
}

/** The model configuration of the admin config, or null when not configured. */
export function languageModelConfig(config: { INBOX_LLM_URL?: string; INBOX_LLM_MODEL?: string; INBOX_LLM_API_KEY?: string; INBOX_LLM_TIMEOUT_MS?: number }): LanguageModelConfig | null {
  if (!config.INBOX_LLM_URL || !config.INBOX_LLM_MODEL) return null;
  return { url: config.INBOX_LLM_URL.replace(/\/+$/, ''), model: config.INBOX_LLM_MODEL, apiKey: config.INBOX_LLM_API_KEY ?? null, timeoutMs: config.INBOX_LLM_TIMEOUT_MS ?? 10_000 };
}

const MAX_PROMPT_TEXT = 6000;
const MODEL_CONFIDENCE_CAP = 90;

const INSTRUCTIONS = [
  'You classify an email received by the accounts-receivable team of a company from one of its customers.',
  `Answer with a JSON object {"category": one of ${INBOX_CATEGORIES.map((c) => `"${c}"`).join(', ')}, "confidence": an integer 0..100, "reason": one short sentence}.`,
  'remittance: the customer says it paid or sends a payment/remittance advice. promise_to_pay: it says it will pay (later). dispute: it contests an invoice. ' +
    'question: it asks something. auto_reply: an automatic reply such as out-of-office. bounce: a delivery failure notice. other: anything else.',
].join('\n');

function prompt(msg: ParsedInboundMessage, reading: MessageReading, guidelines: string | null) {
  const system = guidelines?.trim() ? `${INSTRUCTIONS}\nThe organization's guidelines:\n${guidelines.trim().slice(0, 4000)}` : INSTRUCTIONS;
  const user = [
    `From: ${msg.from?.name ? `${msg.from.name} ` : ''}<${msg.from?.address ?? 'unknown'}>`,
    `Subject: ${msg.subject ?? ''}`,
    `Attachments: ${msg.attachments.map((a) => a.name).join(', ') || 'none'}`,
    '',
    msg.text.slice(0, MAX_PROMPT_TEXT),
    '',
    `The rules read it as ${reading.category} (confidence ${reading.category_confidence}): ${reading.category_reasons.join('; ')}`,
  ].join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

interface ModelAnswer {
  category: InboxCategory;
  confidence: number;
  reason: string;
}

/** The model's answer when it is usable, else null. */
function answerOf(body: unknown): ModelAnswer | null {
  const content = (body as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.replace(/^```(?:json)?\s*|\s*```$/g, ''));
  } catch {
    return null;
  }
  const { category, confidence, reason } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof category !== 'string' || !(INBOX_CATEGORIES as readonly string[]).includes(category)) return null;
  const value = typeof confidence === 'number' ? confidence : Number(confidence);
  if (!Number.isFinite(value) || value < 0 || value > 100) return null;
  return { category: category as InboxCategory, confidence: Math.round(value), reason: typeof reason === 'string' ? reason.slice(0, 300) : '' };
}

/** Rules' readings a model does not overrule: delivery failures and header-signalled automatic replies. */
function settled(msg: ParsedInboundMessage, reading: MessageReading): boolean {
  if (reading.category === 'bounce') return true;
  if (reading.category !== 'auto_reply') return false;
  const h = msg.headers;
  return (h['auto-submitted'] ?? '').toLowerCase().startsWith('auto-replied') || h['x-autoreply'] !== undefined || (h.precedence ?? '').toLowerCase() === 'auto_reply';
}

/**
 * The reading refined by the model, or the reading itself (not configured, settled, or the model
 * failed). `fetchImpl` is the HTTP client (the global fetch by default).
 */
export async function refineReading(
  config: LanguageModelConfig | null,
  input: { msg: ParsedInboundMessage; reading: MessageReading; guidelines: string | null },
  fetchImpl: typeof fetch = fetch,
): Promise<MessageReading> {
  const { msg, reading } = input;
  if (!config || settled(msg, reading)) return reading;
  let answer: ModelAnswer | null = null;
  try {
    const res = await fetchImpl(`${config.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}) },
      body: JSON.stringify({ model: config.model, temperature: 0, response_format: { type: 'json_object' }, messages: prompt(msg, reading, input.guidelines) }),
      signal: AbortSignal.timeout(config.timeoutMs),
    });
    if (res.ok) answer = answerOf(await res.json());
  } catch {
    // the model is an aid: unreachable, slow or malformed, the rules' reading stands
    answer = null;
  }
  if (!answer) return reading;
  const said = `Language model (${config.model}): ${answer.category} at ${answer.confidence}${answer.reason ? ` — ${answer.reason}` : ''}`;
  if (answer.category === reading.category) {
    return { ...reading, category_confidence: Math.max(reading.category_confidence, Math.min(MODEL_CONFIDENCE_CAP, answer.confidence)), category_reasons: [...reading.category_reasons, said] };
  }
  if (answer.confidence <= reading.category_confidence) return { ...reading, category_reasons: [...reading.category_reasons, `${said} (the rules' reading is more confident)`] };
  return {
    ...reading,
    category: answer.category,
    category_confidence: Math.min(MODEL_CONFIDENCE_CAP, answer.confidence),
    category_reasons: [said, `The rules read ${reading.category} at ${reading.category_confidence}: ${reading.category_reasons.join('; ')}`],
  };
}
