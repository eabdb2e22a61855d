/**
 * Writes the inbox benchmark's corpus to a directory, for tuning readers on it outside the run:
 *   npx tsx bench/inbox/write-corpus.ts <dir> [--seed N]
 * → <dir>/<id>.eml (one raw message each), <dir>/labels.json (the truth of every message, in id
 * order, see MessageLabel in bench/inbox/types.ts) and <dir>/ledger.json (customers and invoices the
 * run pushes). Replies to our reminders carry `<reminder.<customer code>@outbound.placeholder.invalid>`
 * in In-Reply-To/References (the run replaces it with the Message-ID of the reminder really sent).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_SEED, generateCorpus } from './corpus.js';
import { renderMessage } from './render.js';

export async function writeCorpus(dir: string, seed = DEFAULT_SEED): Promise<{ messages: number }> {
  const corpus = generateCorpus(seed);
  mkdirSync(dir, { recursive: true });
  for (const m of corpus.messages) writeFileSync(path.join(dir, `${m.label.id}.eml`), await renderMessage(m.spec));
  writeFileSync(path.join(dir, 'labels.json'), JSON.stringify(corpus.messages.map((m) => m.label), null, 2) + '\n');
  writeFileSync(path.join(dir, 'ledger.json'), JSON.stringify(corpus.ledger, null, 2) + '\n');
  return { messages: corpus.messages.length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--'));
  const seedAt = args.indexOf('--seed');
  if (!dir) {
    process.stderr.write('usage: npx tsx bench/inbox/write-corpus.ts <dir> [--seed N]\n');
    process.exit(2);
  }
  const { messages } = await writeCorpus(dir, seedAt >= 0 ? Number(args[seedAt + 1]) : DEFAULT_SEED);
  process.stdout.write(`${messages} messages written to ${dir} (labels.json, ledger.json)\n`);
}
