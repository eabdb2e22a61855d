/** splitMemories on the evaluation set and on small texts (pure: no stack). */
import { describe, expect, it } from 'vitest';
import { extractPages } from '../src/extraction/parse.js';
import { sentenceBounds, splitMemories, withoutReporting } from '../src/extraction/memories.js';
import { normaliseText, sha256 } from '../src/extraction/text.js';
import { FIXTURE_FILES, fixture } from './extraction-support.js';

const one = (text: string) => splitMemories([{ page: 1, text }]);

describe('splitMemories', () => {
  it.each(FIXTURE_FILES)('keeps the excerpt contract and stable keys on %s', async (file, mime) => {
    const pages = await extractPages(fixture(file), mime);
    const drafts = splitMemories(pages);
    expect(drafts.length).toBeGreaterThan(3);
    for (const d of drafts) {
      const page = pages.find((p) => p.page === d.page)!;
      expect(page.text.slice(d.start, d.end)).toBe(d.excerpt);
      expect(d.text_hash).toBe(sha256(normaliseText(d.text)));
      expect(d.key).toBe(sha256(`${d.page}:${d.start}:${normaliseText(d.text)}`));
    }
    expect(new Set(drafts.map((d) => d.key)).size).toBe(drafts.length);
    // recomputed after a retry: the same keys
    expect(splitMemories(await extractPages(fixture(file), mime)).map((d) => d.key)).toEqual(drafts.map((d) => d.key));
  });

  it('keeps a numbered list with its introduction as one procedural memory', () => {
    const text = 'Dunning\nTo send the dunning sequence:\n1. Send the first reminder.\n2. Call the customer after\n   ten days.\n3. Send a final notice.\nReminders are never sent during a dispute.';
    const drafts = one(text);
    expect(drafts.map((d) => d.knowledge_type)).toEqual(['procedural', 'declarative']);
    expect(drafts[0]!.excerpt).toBe('To send the dunning sequence:\n1. Send the first reminder.\n2. Call the customer after\n   ten days.\n3. Send a final notice.');
    expect(drafts[0]!.text.split('\n')).toHaveLength(5);
  });

  it('keeps a bulleted list of instructions as one procedural memory, a bulleted list of facts as one memory per bullet (marker outside the excerpt)', () => {
    const steps = one('Before a write-off:\n- Check the claim.\n- Request proof of delivery.\n- Create a credit memo.');
    expect(steps).toHaveLength(1);
    expect(steps[0]!.knowledge_type).toBe('procedural');
    const facts = one('Limits\n* Acme Foods has a credit limit of USD 250,000.\n* Globex Retail has a credit limit of USD 400,000.');
    expect(facts.map((d) => [d.excerpt, d.knowledge_type])).toEqual([
      ['Acme Foods has a credit limit of USD 250,000.', 'declarative'],
      ['Globex Retail has a credit limit of USD 400,000.', 'declarative'],
    ]);
  });

  it('turns table rows into document memories labelled by the header row (Markdown, pipes, wide columns)', () => {
    const md = one('| Customer | Channel |\n|---|---|\n| Acme Foods | Email |\n| Stark Hardware | Phone |');
    expect(md.map((d) => [d.text, d.knowledge_type])).toEqual([
      ['Customer: Acme Foods; Channel: Email', 'document'],
      ['Customer: Stark Hardware; Channel: Phone', 'document'],
    ]);
    expect(md[0]!.excerpt).toBe('| Acme Foods | Email |');
    const wide = one('Code      Meaning\nSHORT     Unexplained short payment\nPRICE     Price difference');
    expect(wide.map((d) => d.text)).toEqual(['Code: SHORT; Meaning: Unexplained short payment', 'Code: PRICE; Meaning: Price difference']);
  });

  it('splits paragraphs into sentences, keeps continuations together and drops greetings, questions and fragments', () => {
    const drafts = one(
      'Hi Marco,\n\nAcme pays by ACH, e.g. on the 15th of each month. Inc. names are kept together. This applies to all branches. Globex Retail pays by check. Could you check this?\n\nBest regards,\nDana',
    );
    expect(drafts.map((d) => d.text)).toEqual(['Acme pays by ACH, e.g. on the 15th of each month.', 'Inc. names are kept together. This applies to all branches.', 'Globex Retail pays by check.']);
  });

  it('types sentences: instructions procedural, contact details document, statements declarative', () => {
    expect(one('Always call Acme Foods before noon.')[0]!.knowledge_type).toBe('procedural');
    expect(one('If the claim is valid, create a credit memo.')[0]!.knowledge_type).toBe('procedural');
    expect(one('Credit limits are reviewed every 12 months.')[0]!.knowledge_type).toBe('declarative');
    expect(one('Statements go to ap@acme.example from now on.')[0]!.knowledge_type).toBe('document');
  });

  it('leaves a leading reporting clause out of the text, not out of the excerpt, unless a pronoun follows', () => {
    const [d] = one('Dana reminded everyone that late payment interest of 1.5% per month is charged on overdue balances.');
    expect(d!.text).toBe('Late payment interest of 1.5% per month is charged on overdue balances.');
    expect(d!.excerpt).toMatch(/^Dana reminded everyone that late/);
    expect(withoutReporting('Acme Foods confirmed that they pay by check.')).toBe('Acme Foods confirmed that they pay by check.');
    expect(withoutReporting('Priya Nair reported that Hooli Cloud pays through a portal.')).toBe('Hooli Cloud pays through a portal.');
  });

  it('finds sentence bounds without splitting decimals, abbreviations or initials', () => {
    const s = 'Interest is 1.5% per month. Dr. J. Smith approves it! Done.';
    expect(sentenceBounds(s).map(([a, b]) => s.slice(a, b))).toEqual(['Interest is 1.5% per month.', 'Dr. J. Smith approves it!', 'Done.']);
  });
});
