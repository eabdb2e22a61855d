/**
 * The isolation bench's load (bench/isolation.ts) in a process of its own: `previews` clients calling
 * the heaviest template preview and `uploads` clients uploading a 10 MB CAMT.053 statement in loops,
 * through the gateway. Run apart from the measuring client, so the load generator's own work (building
 * and sending 10 MB bodies) never stalls the event loop that times GET /v2/users/me: what is measured is
 * the servers' answer, not the client's.
 *
 * Parent → child (IPC): {config} starts the loops (the statement is 10 MB: too large for an environment
 * variable), {count: true} starts counting answers (after the steady state is reached),
 * {stop: true} ends the loops; the child answers {previews: {statuses, errors}, uploads: {…}} and exits.
 */
import http from 'node:http';

interface LoadConfig {
  base: string;
  token: string;
  previewPath: string;
  previews: number;
  uploads: number;
  /** the statement's text; `__ID__` marks its ids, replaced per upload */
  xml: string;
}

let config: LoadConfig;
let auth: Record<string, string> = {};
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
let stop = false;
let counting = false;

function loop(clients: number, once: () => Promise<number>) {
  const statuses: Record<string, number> = {};
  let errors = 0;
  const loops = Array.from({ length: clients }, async () => {
    while (!stop) {
      try {
        const s = await once();
        if (counting) statuses[s] = (statuses[s] ?? 0) + 1;
      } catch {
        if (counting) errors++;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
  return { done: Promise.all(loops), result: () => ({ statuses, errors }) };
}

const preview = () =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(`${config.base}${config.previewPath}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end('{}');
  });

let seq = 0;
const upload = async () => {
  const id = `ISO-${process.pid}-${++seq}-${Date.now()}`;
  const form = new FormData();
  form.set('format', 'camt053');
  form.set('file', new Blob([config.xml.replaceAll('__ID__', id)]), `${id}.xml`);
  const res = await fetch(`${config.base}/v2/bank-statements`, { method: 'POST', headers: auth, body: form });
  await res.arrayBuffer();
  return res.status;
};

let previews: ReturnType<typeof loop>;
let uploads: ReturnType<typeof loop>;

process.on('message', (msg: { config?: LoadConfig; count?: boolean; stop?: boolean }) => {
  if (msg.config) {
    config = msg.config;
    auth = { authorization: `Bearer ${config.token}` };
    previews = loop(config.previews, preview);
    uploads = loop(config.uploads, upload);
  }
  if (msg.count) counting = true;
  if (msg.stop) {
    counting = false;
    stop = true;
    void Promise.all([previews.done, uploads.done]).then(() => {
      process.send!({ previews: previews.result(), uploads: uploads.result() }, () => process.exit(0));
    });
  }
});
