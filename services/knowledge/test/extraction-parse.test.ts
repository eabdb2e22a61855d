/** extractPages on the evaluation set's real documents, one per supported format (pure: no stack). */
import { describe, expect, it } from 'vitest';
import { csvText, extractPages, splitThread, UnreadableDocumentError } from '../src/extraction/parse.js';
import { fixture } from './extraction-support.js';

describe('extractPages', () => {
  it('reads a PDF page by page (unpdf), numbering pages from 1', async () => {
    const pages = await extractPages(fixture('ar-playbook.pdf'), 'application/pdf');
    expect(pages.map((p) => p.page)).toEqual([1, 2, 3]);
    expect(pages[0]!.text).toContain('Our standard payment terms are net 30 days from the invoice date.');
    expect(pages[1]!.text).toContain('Acme Foods pays by ACH');
    expect(pages[2]!.text).toContain('Credit manager | Dana Whitfield | dana.whitfield@example.com');
    expect(pages[0]!.text).not.toContain('Acme Foods');
  });

  it('reads a DOCX (mammoth) keeping list numbers and table rows', async () => {
    const [page, ...rest] = await extractPages(fixture('short-payment-procedure.docx'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(rest).toEqual([]);
    expect(page!.text).toMatch(/^\s*1\. Match the payment to the open invoices named in the remittance\.$/m);
    expect(page!.text).toMatch(/^\s*4\. If there is no answer after 10 days/m);
    expect(page!.text).toMatch(/^FREIGHT\s{3,}Freight charge not accepted\s{3,}Cash application$/m);
  });

  it('reads an email thread (postal-mime): the newest message first, the quoted one on page 2 without quote markers', async () => {
    const pages = await extractPages(fixture('dispute-thread.eml'), 'message/rfc822');
    expect(pages.map((p) => p.page)).toEqual([1, 2]);
    expect(pages[0]!.text).toMatch(/^Subject: Re: Umbrella Pharmacies open invoices/);
    expect(pages[0]!.text).toContain('INV-20931');
    expect(pages[0]!.text).not.toContain('INV-20877');
    expect(pages[1]!.text).toContain('Umbrella Pharmacies disputes invoice INV-20877 because the delivery arrived damaged.');
    expect(pages[1]!.text).not.toMatch(/^>/m);
    expect(pages[1]!.text).not.toContain('wrote:');
  });

  it('splits "-----Original Message-----" threads too', () => {
    expect(splitThread('Newer text here.\n\n-----Original Message-----\nFrom: a@b.example\nOlder text here.')).toEqual(['Newer text here.', '-----Original Message-----\nFrom: a@b.example\nOlder text here.']);
  });

  it('reads a CSV (csv-parse) as one "Header: value; …" line per row, empty cells left out', async () => {
    const [page] = await extractPages(fixture('customer-contacts.csv'), 'text/csv');
    const lines = page!.text.split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toBe('Customer: Acme Foods; Account number: C-10042; Contact: Lena Ortiz; Role: AP manager; Email: lena.ortiz@acme.example; Phone: +1 555 0100');
    expect(csvText('A,B,C\n1,,"x, y"\n')).toBe('A: 1; C: x, y');
  });

  it('reads HTML (html-to-text) without scripts, styles, navigation or link targets', async () => {
    const [page] = await extractPages(fixture('credit-policy.html'), 'text/html');
    expect(page!.text).toContain('All Public Sector customers are exempt from credit insurance.');
    expect(page!.text).toMatch(/^\s*1\. Pull the latest credit report\.$/m);
    expect(page!.text).not.toContain('analytics');
    expect(page!.text).not.toContain('font-family');
    expect(page!.text).not.toContain('Home');
  });

  it('takes Markdown and plain text as they are (BOM dropped, CRLF to LF)', async () => {
    const [md] = await extractPages(fixture('team-notes.md'), 'text/markdown');
    expect(md!.text.startsWith('# Collections team notes')).toBe(true);
    const [txt] = await extractPages(new TextEncoder().encode('\uFEFFLine one.\r\nLine two.\r\n'), 'text/plain');
    expect(txt).toEqual({ page: 1, text: 'Line one.\nLine two.' });
  });

  it('refuses bytes that are not the declared type with UnreadableDocumentError', async () => {
    await expect(extractPages(new TextEncoder().encode('not a pdf'), 'application/pdf')).rejects.toBeInstanceOf(UnreadableDocumentError);
    await expect(extractPages(new TextEncoder().encode('not a zip'), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document')).rejects.toBeInstanceOf(UnreadableDocumentError);
  });
});
