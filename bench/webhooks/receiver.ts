/**
 * The webhook bench's receiver, in its own process (its own core): a plain node:http server that
 * verifies every request with `standardwebhooks` (as a customer's receiver would) and answers 204.
 * Prints `LISTENING <port>`; on `report` (stdin line) prints one JSON line of what it received:
 * per request the path (endpoint), the webhook-id, the receipt time (ms since the epoch) and whether
 * the signature verified.
 */
import http from 'node:http';
import { createInterface } from 'node:readline';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

const secret = process.env.BENCH_WEBHOOK_SECRET!;
const hook = new Webhook(secret);
const received: [string, string, number, boolean][] = [];
const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    const id = String(req.headers['webhook-id'] ?? '');
    let ok = false;
    if (id) {
      try {
        hook.verify(Buffer.concat(chunks).toString('utf8'), {
          'webhook-id': id,
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
        ok = true;
      } catch {
        ok = false;
      }
      received.push([req.url ?? '', id, at, ok]);
    }
    res.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() === 'report') process.stdout.write(`${JSON.stringify(received)}\n`);
  if (line.trim() === 'reset') received.length = 0;
});
