/**
 * `npm run bench -- <name>`: runs one benchmark; results go to bench/results/<name>.json.
 *   gateway   direct service vs bare reverse proxy vs gateway (autocannon, c=1 and c=50)
 *   cash-app  predicted overdue over 1M open + 2M closed invoices vs the bare SQL aggregation
 */
const benches: Record<string, () => Promise<unknown>> = {
  gateway: async () => (await import('./gateway.js')).run(),
  'cash-app': async () => (await import('./cash-app.js')).run(),
};

const name = process.argv[2];
if (!name || !benches[name]) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}>\n`);
  process.exit(2);
}
await benches[name]();
process.exit(0);
