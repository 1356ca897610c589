// Real receivers on 127.0.0.1 for the egress tests: node:http, node:https and node:net servers on random
// ports that record what reached them. No HTTP mocks: the client under test talks to real sockets.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export const TLS_KEY = readFileSync(new URL('./key.pem', import.meta.url));
/** Self-signed for hooks.test.example and 127.0.0.1, valid until 2126. */
export const TLS_CERT = readFileSync(new URL('./cert.pem', import.meta.url));

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** TLS server name the client sent (SNI), when over https. */
  servername: string | false | undefined;
}

export interface Receiver {
  readonly port: number;
  /** Requests whose body arrived in full. */
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted (TLS handshakes included, successful or not). */
  connections: number;
  /** Destroys every open connection (idle keep-alive ones included), keeping the server listening. */
  dropConnections(): void;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void;

async function listen(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

function track(server: net.Server): Set<net.Socket> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

async function serve(server: http.Server | https.Server, handler: Handler): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = track(server);
  const receiver: Receiver = {
    port: 0,
    requests,
    connections: 0,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', () => {
    receiver.connections += 1;
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const servername =
        'servername' in req.socket ? (req.socket as { servername: string | false }).servername : undefined;
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, servername });
      handler(req, res, body);
    });
  });
  const port = await listen(server);
  return Object.assign(receiver, { port });
}

/** An http receiver on 127.0.0.1 calling `handler` once the request body has arrived. */
export function httpReceiver(handler: Handler): Promise<Receiver> {
  return serve(http.createServer(), handler);
}

/** An https receiver with the self-signed fixture certificate, or the given one. */
export function httpsReceiver(handler: Handler, certificate?: { key: string; cert: string }): Promise<Receiver> {
  return serve(https.createServer(certificate ?? { key: TLS_KEY, cert: TLS_CERT }), handler);
}

/** A raw TCP receiver, for behaviour no HTTP server would produce. */
export async function tcpReceiver(onSocket: (socket: net.Socket) => void): Promise<Receiver> {
  const server = net.createServer();
  const sockets = track(server);
  const receiver: Receiver = {
    port: 0,
    requests: [],
    connections: 0,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('connection', (socket: net.Socket) => {
    receiver.connections += 1;
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  const port = await listen(server);
  return Object.assign(receiver, { port });
}
