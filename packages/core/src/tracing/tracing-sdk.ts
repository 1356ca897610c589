import { context, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { TracingConfig } from '../config.js';

// For tests that read spans: the SDK's own in-memory exporter.
export { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface TracingOptions {
  serviceName: string;
  exporter: SpanExporter;
  /** Export each span as it ends (tests that read an in-memory exporter); default: in batches. */
  exportEachSpan?: boolean;
}

export interface RunningTracing {
  /** Exports what is still buffered and unregisters everything: the API is a no-op again. */
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK for this process: the tracer provider, the AsyncLocalStorage context manager and
 * the W3C trace context propagator (an incoming `traceparent` continues its trace). The sampler is the SDK's default:
 * parent-based, always on at the root.
 */
export function startTracing(options: TracingOptions): RunningTracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [
      options.exportEachSpan ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(options.exporter),
    ],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Spans exported over OTLP/HTTP in batches to the configured URL. */
export function startOtlpTracing(config: TracingConfig, processName: string): RunningTracing {
  return startTracing({
    serviceName: config.serviceName ?? processName,
    exporter: new OTLPTraceExporter({ url: config.tracesUrl }),
  });
}
