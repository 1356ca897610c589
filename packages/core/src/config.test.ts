import { describe, expect, it } from 'vitest';
import { readCoreConfig } from './config.js';

describe('readCoreConfig', () => {
  it('requires SVC_PUBLIC_BASE_URL outside local mode, with one line that says what to set', () => {
    expect(() => readCoreConfig({ DATABASE_URL: 'postgres://db/svc' }, 'production')).toThrow(
      /^SVC_PUBLIC_BASE_URL is required in production: the URL where this service is reached, e\.g\. https:\/\/webhooks\.example\.com$/,
    );
    expect(() => readCoreConfig({ SVC_PUBLIC_BASE_URL: 'webhooks.example.com' }, 'production')).toThrow(
      /SVC_PUBLIC_BASE_URL must be an http\(s\) URL/,
    );
    expect(readCoreConfig({}, 'local').publicBaseUrl).toBe('http://localhost:8080');
  });

  it('sizes the main database pool from SVC_DB_POOL_SIZE, 2 to 500, default 10, refusing anything else in one line', () => {
    const production = { SVC_PUBLIC_BASE_URL: 'https://hooks.example.com' };
    expect(readCoreConfig(production, 'production').poolSize).toBe(10);
    expect(readCoreConfig({ ...production, SVC_DB_POOL_SIZE: '' }, 'production').poolSize).toBe(10);
    expect(readCoreConfig({ ...production, SVC_DB_POOL_SIZE: '2' }, 'production').poolSize).toBe(2);
    expect(readCoreConfig({ ...production, SVC_DB_POOL_SIZE: '500' }, 'production').poolSize).toBe(500);
    for (const value of ['0', '1', '501', '-4', '4.5', ' 8', 'ten', '1e2', '0x10'])
      expect(() => readCoreConfig({ ...production, SVC_DB_POOL_SIZE: value }, 'production'), value).toThrow(
        new RegExp(`^SVC_DB_POOL_SIZE must be an integer from 2 to 500, not "${value.replace(/[.+]/g, '\\$&')}"$`),
      );
  });

  it("never accepts the service's own public host as a receiver", () => {
    const config = readCoreConfig(
      { SVC_PUBLIC_BASE_URL: 'https://Hooks.Example.com/', SVC_SERVICE_HOSTS: 'api.example.com' },
      'production',
    );
    expect(config.publicBaseUrl).toBe('https://hooks.example.com');
    expect(config.urlPolicy.serviceHosts).toEqual(['hooks.example.com', 'api.example.com']);
  });

  it('allows loopback receivers only when asked outside local mode, and says so in one WARNING line', () => {
    const production = { SVC_PUBLIC_BASE_URL: 'https://hooks.example.com' };
    expect(readCoreConfig(production, 'production')).toMatchObject({
      urlPolicy: { allowLoopback: false },
      warnings: [],
    });
    const allowed = readCoreConfig({ ...production, SVC_ALLOW_LOOPBACK_RECEIVERS: '1' }, 'production');
    expect(allowed.urlPolicy.allowLoopback).toBe(true);
    expect(allowed.warnings).toEqual([expect.stringMatching(/^WARNING: loopback receivers are allowed [^\n]*$/)]);

    const local = readCoreConfig({}, 'local');
    expect(local.urlPolicy.allowLoopback).toBe(true);
    expect(local.warnings).toEqual([expect.stringMatching(/^WARNING: loopback receivers are allowed \(local mode\)/)]);
    expect(readCoreConfig({ SVC_ALLOW_LOOPBACK_RECEIVERS: '0' }, 'local')).toMatchObject({
      urlPolicy: { allowLoopback: false },
      warnings: [],
    });
    expect(() => readCoreConfig({ SVC_ALLOW_LOOPBACK_RECEIVERS: 'yes' }, 'local')).toThrow(
      'SVC_ALLOW_LOOPBACK_RECEIVERS must be 0 or 1',
    );
  });

  it('turns tracing on only with an OTLP endpoint, from the standard OpenTelemetry variables', () => {
    expect(readCoreConfig({}, 'local').tracing).toBeNull();
    expect(readCoreConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'local').tracing).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: null,
    });
    expect(
      readCoreConfig(
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/otlp/traces',
          OTEL_SERVICE_NAME: 'webhooks-eu',
        },
        'local',
      ).tracing,
    ).toEqual({ tracesUrl: 'https://traces.example.com/otlp/traces', serviceName: 'webhooks-eu' });
    for (const off of [{ OTEL_SDK_DISABLED: 'true' }, { OTEL_TRACES_EXPORTER: 'none' }])
      expect(
        readCoreConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', ...off }, 'local').tracing,
      ).toBeNull();
    // The value is not repeated: an endpoint may carry credentials.
    expect(() => readCoreConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector-secret:4318' }, 'local')).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL like http:\/\/collector:4318$/,
    );
  });
});
