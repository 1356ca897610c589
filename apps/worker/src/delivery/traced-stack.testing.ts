import { afterAll, beforeAll } from 'vitest';
import { loadTracingSdk, type InMemorySpanExporter, type RunningTracing } from '@svc/core';
import { startDeliveryStack, type DeliveryStack } from './delivery.testing.js';

/** A delivery stack with tracing on, every span exported at once into memory. */
export interface TracedStack {
  stack: DeliveryStack;
  exporter: InMemorySpanExporter;
}

/**
 * Starts the SDK with an in-memory exporter and a delivery stack before the file's tests, and stops both after them.
 * The returned object is filled in by `beforeAll`.
 */
export function useTracedStack(): TracedStack {
  const traced = {} as TracedStack;
  let tracing: RunningTracing | undefined;
  beforeAll(async () => {
    const sdk = await loadTracingSdk();
    traced.exporter = new sdk.InMemorySpanExporter();
    tracing = sdk.startTracing({ serviceName: 'svc-webhooks-test', exporter: traced.exporter, exportEachSpan: true });
    traced.stack = await startDeliveryStack();
  });
  afterAll(async () => {
    await traced.stack?.close();
    await tracing?.shutdown();
  });
  return traced;
}
