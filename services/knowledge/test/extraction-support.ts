/** Shared helpers of the extraction unit tests: the evaluation-set fixtures (test/fixtures/knowledge/). */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PartnerRef, SegmentRef, SupportedMimeType } from '../src/extraction/types.js';

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'knowledge');

export const FIXTURE_FILES: [string, SupportedMimeType][] = [
  ['ar-playbook.pdf', 'application/pdf'],
  ['short-payment-procedure.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
  ['dispute-thread.eml', 'message/rfc822'],
  ['customer-contacts.csv', 'text/csv'],
  ['credit-policy.html', 'text/html'],
  ['team-notes.md', 'text/markdown'],
  ['ar-meeting-minutes.txt', 'text/plain'],
];

export function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(path.join(FIXTURES, name)));
}

export function context(): { partners: PartnerRef[]; segments: SegmentRef[] } {
  return JSON.parse(readFileSync(path.join(FIXTURES, 'context.json'), 'utf8')) as { partners: PartnerRef[]; segments: SegmentRef[] };
}
