import {
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import type { TracingConfig } from '../config.js';
import type { RunningTracing } from './tracing-sdk.js';

/**
 * Tracing through the OpenTelemetry API only (docs/operations.md, "Tracing"). Nothing here loads or registers the
 * SDK: without a registered provider (OTEL_EXPORTER_OTLP_ENDPOINT unset) every call is the API's no-op, spans do
 * not record, and the attribute objects below are never built (callers check `span.isRecording()` first).
 *
 * What a span may hold: IDs, event type names, counts, status codes, outcomes, durations and a receiver's scheme,
 * host and port. Never a secret, a header value, a URL's path, query or userinfo, or a body.
 */

/** The SDK's module, imported when tracing is on (or by tests that read spans). */
export function loadTracingSdk(): Promise<typeof import('./tracing-sdk.js')> {
  return import('./tracing-sdk.js');
}

/**
 * Starts tracing as configured: spans exported over OTLP/HTTP, or nothing at all (null) when no endpoint is set:
 * then nothing of the SDK is registered (and, run from the sources, its modules are not even loaded).
 */
export async function startConfiguredTracing(
  config: TracingConfig | null,
  processName: string,
): Promise<RunningTracing | null> {
  if (!config) return null;
  return (await loadTracingSdk()).startOtlpTracing(config, processName);
}

export const TRACER_NAME = 'svc-webhooks';

/** The span names, one place for the code, the tests and docs/operations.md. */
export const SPAN = {
  /** One admission (POST /messages, GraphQL publish, endpoint test, source capture), from its call to its answer. */
  admission: 'admission',
  /** One admission transaction of a coalesced batch; links to the admission spans it carries. */
  admissionBatch: 'admission.batch',
  /** One claim statement of the delivery engine; links to the admissions of the deliveries it claimed. */
  claim: 'delivery.claim',
  /** One delivery attempt in a worker, from its claim to its settlement (child of the message's admission). */
  job: 'delivery.job',
  /** The HTTP POST of an attempt to the receiver (signing included). */
  attempt: 'delivery.attempt',
  /** An attempt's outcome waiting for and written by a settlement batch. */
  settle: 'delivery.settle',
  /** One settlement statement; links to the settle spans of its outcomes. */
  settleBatch: 'delivery.settle_batch',
} as const;

/** The attribute names of our own (the rest are OpenTelemetry's semantic conventions). */
export const ATTR = {
  teamId: 'svc.team_id',
  tenantId: 'svc.tenant_id',
  eventType: 'svc.event_type',
  messageId: 'svc.message_id',
  endpointId: 'svc.endpoint_id',
  deliveryId: 'svc.delivery_id',
  attemptId: 'svc.attempt_id',
  requestId: 'svc.request_id',
  workerId: 'svc.worker_id',
  admissionOrigin: 'svc.admission.origin',
  admissionOutcome: 'svc.admission.outcome',
  admissionDeliveries: 'svc.admission.deliveries',
  batchSize: 'svc.batch.size',
  claimEndpoints: 'svc.claim.endpoints',
  claimAttempts: 'svc.claim.attempts',
  claimFinished: 'svc.claim.finished',
  attemptNumber: 'svc.attempt.number',
  attemptTrigger: 'svc.attempt.trigger',
  attemptOutcome: 'svc.attempt.outcome',
  attemptDurationMs: 'svc.attempt.duration_ms',
  deliveryStatus: 'svc.delivery.status',
  nextAttemptAt: 'svc.delivery.next_attempt_at',
  settleApplied: 'svc.settle.applied',
  errorCode: 'svc.error.code',
} as const;

export function tracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The W3C traceparent of a span, to store beside what it produced; null when the span has no trace (tracing off). */
export function traceparentOf(span: Span): string | null {
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!isSpanContextValid(span.spanContext())) return null;
  return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0')}`;
}

/** The span context a stored traceparent names (a remote parent); null for null or anything malformed. */
export function spanContextOf(traceparent: string | null): SpanContext | null {
  if (traceparent === null) return null;
  const match = TRACEPARENT.exec(traceparent);
  if (!match) return null;
  const spanContext = { traceId: match[1]!, spanId: match[2]!, traceFlags: parseInt(match[3]!, 16), isRemote: true };
  return isSpanContextValid(spanContext) ? spanContext : null;
}

/** A context whose parent is the stored traceparent's span; the root context when there is none. */
export function contextOf(traceparent: string | null): Context {
  const parent = spanContextOf(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
}

/** Links to the given span contexts, leaving out invalid ones (spans that did not record). */
export function linksTo(contexts: Iterable<SpanContext | null>): Link[] {
  const links: Link[] = [];
  for (const context of contexts) if (context && isSpanContextValid(context)) links.push({ context });
  return links;
}

/**
 * Where a delivery went, for the attempt span: the receiver's scheme, host and port only. The path is left out with
 * the query and userinfo: chat services' webhook URLs carry their token in the path.
 */
export function receiverAttributes(url: string): Attributes {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed) return {};
  const scheme = parsed.protocol.replace(/:$/, '');
  return {
    'url.scheme': scheme,
    'server.address': parsed.hostname,
    'server.port': parsed.port ? Number(parsed.port) : scheme === 'https' ? 443 : 80,
  };
}

/** Marks a span failed with a short, value-free reason (an error code, an outcome): never an error's message. */
export function markFailed(span: Span, reason: string): void {
  span.setStatus({ code: SpanStatusCode.ERROR, message: reason });
  span.setAttribute('error.type', reason);
}

/** What may be said of a thrown error in a span: its code when it has a short one, else its class name. */
export function errorReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
  return error instanceof Error ? error.constructor.name || 'Error' : 'unknown';
}
