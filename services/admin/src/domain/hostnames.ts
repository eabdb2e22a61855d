/** Host-name rules for mail routing (mailbox settings' inbound host and sending domain). */
import { z } from 'zod';

/**
 * A DNS host name as mail is routed to it: at most 253 characters, at least two labels of 1..63
 * letters, digits and hyphens (not at either end of a label), and a top-level label of letters
 * (or an IDNA `xn--` label), so IP addresses and single-label names are refused. No trailing dot.
 * Stored and answered in lower case.
 */
export const HOSTNAME_MESSAGE =
  'must be a host name such as mail.example.com (labels of letters, digits and inner hyphens, at most 63 characters each and 253 in all; no IP address, no trailing dot)';

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const TOP_LABEL = '(?:[A-Za-z]{2,63}|[Xx][Nn]--[A-Za-z0-9-]{0,58}[A-Za-z0-9])';
export const HOSTNAME_PATTERN = new RegExp(`^(?:${LABEL}\\.)+${TOP_LABEL}$`);

export function isHostname(value: string): boolean {
  return value.length <= 253 && HOSTNAME_PATTERN.test(value);
}

/** `host` equals `domain` or is a name below it (case-insensitive). */
export function isWithinDomain(host: string, domain: string): boolean {
  const h = host.toLowerCase();
  const d = domain.toLowerCase();
  return h === d || h.endsWith(`.${d}`);
}

export const hostnameSchema = () => z.string().max(253, HOSTNAME_MESSAGE).regex(HOSTNAME_PATTERN, HOSTNAME_MESSAGE).meta({ example: 'mail.example.com' });
