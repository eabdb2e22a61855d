/** Ports for the suite's stack, chosen up front because the launcher binds fixed ports of its own. */
import net from 'node:net';

async function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * `n` free ports below the kernel's ephemeral range (32768+), where ports handed out for port 0
 * (Temporal's own HTTP/metrics ports, other test runs) cannot take them between now and the launcher's bind.
 */
export async function fixedFreePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  let port = 20_000 + Math.floor(Math.random() * 12_000);
  while (out.length < n) {
    if (port >= 32_000) port = 20_000;
    if (await bindable(port)) out.push(port);
    port++;
  }
  return out;
}
