import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { readCoreConfig } from '../config.js';
import {
  contextOf,
  receiverAttributes,
  spanContextOf,
  startConfiguredTracing,
  traceparentOf,
  tracer,
} from './tracing.js';

describe('tracing helpers', () => {
  it('read back the traceparent they store, and nothing from a malformed or empty one', () => {
    const stored = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const parent = contextOf(stored);
    const span = trace.getSpan(parent)!;
    expect(span.spanContext()).toEqual({
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      isRemote: true,
    });
    expect(traceparentOf(span)).toBe(stored);
    for (const bad of [
      null,
      '',
      '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      `00-${'0'.repeat(32)}-b7ad6b7169203331-01`,
    ])
      expect(spanContextOf(bad)).toBeNull();
    // Tracing off: the API's no-op span has no trace, and nothing is stored.
    expect(traceparentOf(tracer().startSpan('off'))).toBeNull();
  });

  it('say where a delivery went by scheme, host and port only', () => {
    expect(receiverAttributes('https://user:pass@hooks.example.com/services/T0/B0/token?sig=abc#frag')).toEqual({
      'url.scheme': 'https',
      'server.address': 'hooks.example.com',
      'server.port': 443,
    });
    expect(receiverAttributes('http://127.0.0.1:8123/in')).toEqual({
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': 8123,
    });
  });

  it('export spans over OTLP/HTTP to the configured endpoint, and register nothing when none is set', async () => {
    expect(await startConfiguredTracing(readCoreConfig({}, 'local').tracing, 'svc-webhooks-test')).toBeNull();
    expect(traceparentOf(tracer().startSpan('still off'))).toBeNull();

    const received: { path: string; type: string; body: string }[] = [];
    const collector = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({
          path: request.url ?? '',
          type: request.headers['content-type'] ?? '',
          body: Buffer.concat(chunks).toString('utf8'),
        });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
      const config = readCoreConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, 'local');
      const tracing = (await startConfiguredTracing(config.tracing, 'svc-webhooks-test'))!;
      const span = tracer().startSpan('exported');
      expect(traceparentOf(span)).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      span.end();
      await tracing.shutdown();
      expect(received).toHaveLength(1);
      expect(received[0]).toMatchObject({ path: '/v1/traces', type: 'application/json' });
      expect(received[0]!.body).toContain('"exported"');
      expect(received[0]!.body).toContain('svc-webhooks-test');
      // Shut down, the API is a no-op again.
      expect(traceparentOf(tracer().startSpan('off again'))).toBeNull();
    } finally {
      collector.close();
    }
  });
});
