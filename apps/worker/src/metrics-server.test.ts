import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '@svc/core';
import { readMetricsServerSettings, startMetricsServer, type RunningMetricsServer } from './metrics-server.js';

let server: RunningMetricsServer;
const metrics = new Metrics();

beforeAll(async () => {
  metrics.attempts.inc({ outcome: 'succeeded' }, 3);
  server = await startMetricsServer(metrics, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await server.close();
});

describe('worker metrics server', () => {
  it('serves the registry at GET /metrics in Prometheus text', async () => {
    const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toContain('# TYPE svc_delivery_attempts_total counter');
    expect(text).toContain('svc_delivery_attempts_total{outcome="succeeded"} 3');
  });

  it('answers 404 for anything else', async () => {
    expect((await fetch(`http://127.0.0.1:${server.port}/`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('is started only when METRICS_PORT is set, and refuses a bad port at start', () => {
    expect(readMetricsServerSettings({})).toBeNull();
    expect(readMetricsServerSettings({ METRICS_PORT: '9464' })).toEqual({ port: 9464, host: '0.0.0.0' });
    expect(readMetricsServerSettings({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1' })).toEqual({
      port: 9464,
      host: '127.0.0.1',
    });
    for (const bad of ['http', '70000', '-1', '9464 '])
      expect(() => readMetricsServerSettings({ METRICS_PORT: bad })).toThrow(/METRICS_PORT/);
  });
});
