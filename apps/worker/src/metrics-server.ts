import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '@svc/core';

export interface MetricsServerSettings {
  port: number;
  host: string;
}

/**
 * METRICS_PORT (optional): the worker serves GET /metrics on it, on all interfaces unless METRICS_HOST names one.
 * Unset means no metrics server. Read once at start by main.ts.
 */
export function readMetricsServerSettings(env: NodeJS.ProcessEnv): MetricsServerSettings | null {
  const raw = env['METRICS_PORT'];
  if (raw === undefined || raw === '') return null;
  const port = /^[0-9]{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new Error(`METRICS_PORT must be a port number (0 to 65535), not "${raw}"`);
  return { port, host: env['METRICS_HOST'] || '0.0.0.0' };
}

export interface RunningMetricsServer {
  /** The bound port (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

/** A bare node:http server for Prometheus: GET /metrics renders the process's registry; anything else is 404. */
export async function startMetricsServer(
  metrics: Metrics,
  settings: MetricsServerSettings,
): Promise<RunningMetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics' || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': metrics.registry.contentType });
        response.end(request.method === 'HEAD' ? undefined : text);
      },
      () => {
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
