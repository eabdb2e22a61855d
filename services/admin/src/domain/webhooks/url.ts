/**
 * The check of a webhook endpoint's URL when it is stored: http(s) only, no credentials, and no
 * loopback, private, link-local or metadata target (unless OUTBOUND_ALLOWLIST allows it), whether
 * named by an address literal or by a host name that resolves to one. A name that does not resolve
 * (now) is accepted: DNS answers change, and the kernel's guarded client checks the address again
 * at every delivery, which is the check that counts.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { parseIp, ValidationError, type OutboundPolicy } from '@rp/platform';

/** Longest wait for the resolver; a name it cannot answer in time is treated like one that does not resolve. */
const LOOKUP_TIMEOUT_MS = 3000;

async function resolveAll(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  const resolved = lookup(host, { all: true, verbatim: true }).then(
    (list) => list.map((a) => a.address),
    () => [] as string[],
  );
  try {
    return await Promise.race([resolved, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why `text` may not be an endpoint URL, or null when it may. */
export async function endpointUrlRefusal(policy: OutboundPolicy, text: string): Promise<string | null> {
  const literal = policy.urlRefusal(text);
  if (literal) return literal;
  const url = new URL(text);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host)) return null;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  for (const address of await resolveAll(host)) {
    const bytes = parseIp(address);
    const why = bytes ? policy.refusal(host, bytes, port) : null;
    if (why) return `must not point at ${why}`;
  }
  return null;
}

/** 422 at `body.url` when the URL may not be an endpoint's. */
export async function checkEndpointUrl(policy: OutboundPolicy, url: string): Promise<void> {
  const why = await endpointUrlRefusal(policy, url);
  if (why) throw new ValidationError([{ loc: ['body', 'url'], msg: why, type: 'url_not_allowed' }]);
}
