import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A local webhook receiver for tests and the benchmark: records every request; `answer` decides the status
 * (default 200) and may delay it.
 */
export async function startWebhookReceiver(answer: (r: ReceivedWebhook, n: number) => number | Promise<number> = () => 200): Promise<{
  url: string; received: ReceivedWebhook[]; close(): Promise<void>; server: Server;
}> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const status = await answer(r, received.length);
      if (status >= 300 && status < 400) res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
      res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received, server,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
