/**
 * The extraction's input limits on real documents (pure: no stack): a PDF with more pages than
 * allowed, and DOCX zip bombs — one declaring its true inflated size, one whose zip headers lie
 * about it (caught while inflating). Limits are lowered to fit small fixtures; the checks are the
 * ones the worker runs with the configured limits.
 */
import { describe, expect, it } from 'vitest';
import JSZip from 'jszip';
import { checkInflatedSize, extractPages } from '../src/extraction/parse.js';
import { ExtractionLimitError } from '../src/extraction/types.js';
import { fixture } from './extraction-support.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The fixture DOCX with `padding` bytes of whitespace added to its document part (compresses ~1000:1). */
async function inflatedDocx(padding: number): Promise<Uint8Array> {
  const zip = await JSZip.loadAsync(fixture('short-payment-procedure.docx'));
  const xml = await zip.file('word/document.xml')!.async('string');
  zip.file('word/document.xml', xml.replace('</w:document>', `${' '.repeat(padding)}</w:document>`));
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE', compressionOptions: { level: 9 } });
}

/** Rewrites the uncompressed size of `word/document.xml` in the zip's local and central headers to 1 byte (a lying zip). */
function lieAboutSize(zip: Uint8Array): Uint8Array {
  const out = new Uint8Array(zip);
  const view = new DataView(out.buffer);
  const named = (at: number, length: number) => new TextDecoder().decode(out.subarray(at, at + length)) === 'word/document.xml';
  let patched = 0;
  for (let i = 0; i + 46 <= out.length; i++) {
    const sig = view.getUint32(i, true);
    if (sig === 0x04034b50 && named(i + 30, view.getUint16(i + 26, true))) {
      view.setUint32(i + 22, 1, true); // local file header
      patched++;
    }
    if (sig === 0x02014b50 && named(i + 46, view.getUint16(i + 28, true))) {
      view.setUint32(i + 24, 1, true); // central directory entry
      patched++;
    }
  }
  expect(patched).toBe(2);
  return out;
}

async function limitError(p: Promise<unknown>): Promise<ExtractionLimitError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExtractionLimitError);
  return err as ExtractionLimitError;
}

describe('extraction limits', () => {
  it('refuses a PDF with more pages than allowed, naming the count and the limit', async () => {
    const err = await limitError(extractPages(fixture('ar-playbook.pdf'), 'application/pdf', { pdfPages: 2, docxInflatedBytes: 1e9 }));
    expect(err.code).toBe('too_many_pages');
    expect(err.message).toMatch(/^too_many_pages: the PDF has 3 pages; at most 2/);
    // at the limit it is read
    expect(await extractPages(fixture('ar-playbook.pdf'), 'application/pdf', { pdfPages: 3, docxInflatedBytes: 1e9 })).toHaveLength(3);
  });

  it('refuses a DOCX that declares more inflated bytes than allowed', async () => {
    const bomb = await inflatedDocx(4 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(100_000);
    const err = await limitError(extractPages(bomb, DOCX, { pdfPages: 10, docxInflatedBytes: 1024 * 1024 }));
    expect(err.code).toBe('docx_too_large');
    expect(err.message).toMatch(/^docx_too_large: the DOCX inflates to \d+ bytes; at most 1048576/);
  });

  it('stops inflating a DOCX whose zip headers understate its size, at the limit', async () => {
    const liar = lieAboutSize(await inflatedDocx(4 * 1024 * 1024));
    const err = await limitError(checkInflatedSize(liar, 1024 * 1024));
    expect(err.code).toBe('docx_too_large');
    expect(err.message).toContain('more than 1048576');
  });

  it('reads a DOCX within the limit', async () => {
    const pages = await extractPages(fixture('short-payment-procedure.docx'), DOCX, { pdfPages: 10, docxInflatedBytes: 1024 * 1024 });
    expect(pages[0]!.text).toContain('Match the payment');
  });
});
