import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  /** Every request that came, oldest first. */
  received: Received[];
  /** The status code the receiver answers from now on. */
  answerWith: (status: number) => void;
  close: () => Promise<void>;
}

/**
 * A receiver on a loopback port (local mode accepts loopback endpoints) that keeps what came and answers `status`
 * (204 unless told otherwise), with a short text body so a kept response body has something to show.
 */
export async function startReceiver(status = 204): Promise<Receiver> {
  const received: Received[] = [];
  let answer = status;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (answer === 204) response.writeHead(204).end();
      else response.writeHead(answer, { 'content-type': 'text/plain' }).end(`answered ${answer}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    answerWith: (next) => {
      answer = next;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
