import { randomBytes } from 'node:crypto';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { SPAN, type ReadableSpan } from '@svc/core';
import { uniqueKey } from '../../../server/src/testing/harness.js';
import { useTracedStack } from './traced-stack.testing.js';

const traced = useTracedStack();

/** An incoming W3C traceparent, as a caller's own tracing sends it. */
function callerTrace(): { traceId: string; spanId: string; header: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
}

function spans(traceId: string): ReadableSpan[] {
  return traced.exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
}

function one(list: ReadableSpan[], name: string, match: (span: ReadableSpan) => boolean = () => true): ReadableSpan {
  const found = list.filter((span) => span.name === name && match(span));
  expect(
    found.map((span) => span.name),
    `one ${name} span`,
  ).toEqual([name]);
  return found[0]!;
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const idOf = (span: ReadableSpan) => span.spanContext().spanId;
const linked = (span: ReadableSpan, to: ReadableSpan) => span.links.some((link) => link.context.spanId === idOf(to));

describe('traces from admission to the receiver', () => {
  it('continue the caller traceparent of POST /messages through admission, the claim, the attempt and settlement', async () => {
    const { tenantId, endpointId } = await traced.stack.setup('/traced');
    const caller = callerTrace();
    const published = await traced.stack.h.request('POST', '/messages', {
      headers: { traceparent: caller.header },
      idempotencyKey: uniqueKey(),
      body: { tenant_id: tenantId, event_type: 'order.created', payload: { n: 1 } },
    });
    expect(published.status, published.text).toBe(202);
    const messageId = published.json.id as string;
    await traced.stack.until('the settled job span', () =>
      spans(caller.traceId).some((span) => span.name === SPAN.job) ? true : undefined,
    );
    const trace = spans(caller.traceId);

    const request = one(trace, 'POST /v1/messages');
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(parentOf(request)).toBe(caller.spanId);
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/messages',
      'http.response.status_code': 202,
    });

    const admission = one(trace, SPAN.admission);
    expect(parentOf(admission)).toBe(idOf(request));
    expect(admission.attributes).toMatchObject({
      'svc.message_id': messageId,
      'svc.tenant_id': tenantId,
      'svc.event_type': 'order.created',
      'svc.admission.origin': 'api',
      'svc.admission.outcome': 'admitted',
      'svc.admission.deliveries': 1,
    });
    // The message keeps the admission's traceparent: that is how the worker finds the trace again.
    const [stored] = await traced.stack.h.services.db.query('SELECT traceparent FROM messages WHERE id = $1', [
      messageId,
    ]);
    expect(stored.traceparent).toBe(`00-${caller.traceId}-${idOf(admission)}-01`);

    // The batch and claim spans serve many traces: roots of their own, linked to the admission.
    const all = traced.exporter.getFinishedSpans();
    const batch = one(all, SPAN.admissionBatch, (span) => linked(span, admission));
    expect(batch.spanContext().traceId).not.toBe(caller.traceId);
    expect(batch.attributes['svc.batch.size']).toBeGreaterThanOrEqual(1);
    const claim = one(all, SPAN.claim, (span) => linked(span, admission));
    expect(claim.attributes['svc.claim.attempts']).toBeGreaterThanOrEqual(1);

    const job = one(trace, SPAN.job);
    expect(parentOf(job)).toBe(idOf(admission));
    expect(linked(job, claim)).toBe(true);
    expect(job.attributes).toMatchObject({ 'svc.message_id': messageId, 'svc.endpoint_id': endpointId });
    expect(job.status.code).not.toBe(SpanStatusCode.ERROR);

    const attempt = one(trace, SPAN.attempt);
    expect(parentOf(attempt)).toBe(idOf(job));
    expect(attempt.kind).toBe(SpanKind.CLIENT);
    const port = Number(new URL(traced.stack.base).port);
    expect(attempt.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.response.status_code': 200,
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'svc.endpoint_id': endpointId,
      'svc.delivery_id': job.attributes['svc.delivery_id'],
      'svc.attempt.number': 1,
      'svc.attempt.trigger': 'scheduled',
      'svc.attempt.outcome': 'succeeded',
    });
    expect(attempt.attributes['svc.attempt.duration_ms']).toEqual(expect.any(Number));
    expect(attempt.attributes['svc.attempt_id']).toBe(
      traced.stack.received.find((r) => r.path === '/traced')!.headers['svc-attempt-id'],
    );

    const settle = one(trace, SPAN.settle);
    expect(parentOf(settle)).toBe(idOf(job));
    expect(settle.attributes).toMatchObject({ 'svc.delivery.status': 'succeeded', 'svc.settle.applied': true });
    one(all, SPAN.settleBatch, (span) => linked(span, settle));
  });

  it('record a failing attempt with its outcome, for a GraphQL publish that continues its caller trace too', async () => {
    traced.stack.script.set('/traced-failing', [500]);
    const { tenantId, endpointId } = await traced.stack.setup('/traced-failing', { retry_delays_seconds: [60] });
    const caller = callerTrace();
    const response = await fetch(`${traced.stack.h.rootUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${traced.stack.h.team.key}`,
        traceparent: caller.header,
      },
      body: JSON.stringify({
        query: 'mutation($input: PublishMessageInput!) { publishMessage(input: $input) { id } }',
        variables: { input: { tenantId, eventType: 'order.created', payload: '{"n":2}' } },
      }),
    });
    const messageId = ((await response.json()) as { data: { publishMessage: { id: string } } }).data.publishMessage.id;
    await traced.stack.until('the settled job span', () =>
      spans(caller.traceId).some((span) => span.name === SPAN.job) ? true : undefined,
    );
    const trace = spans(caller.traceId);

    const request = one(trace, 'POST /graphql');
    expect(parentOf(request)).toBe(caller.spanId);
    const admission = one(trace, SPAN.admission);
    expect(parentOf(admission)).toBe(idOf(request));
    expect(admission.attributes['svc.message_id']).toBe(messageId);

    const job = one(trace, SPAN.job);
    expect(parentOf(job)).toBe(idOf(admission));
    expect(job.status).toEqual({ code: SpanStatusCode.ERROR, message: 'http_500' });
    const attempt = one(trace, SPAN.attempt);
    expect(parentOf(attempt)).toBe(idOf(job));
    expect(attempt.status).toEqual({ code: SpanStatusCode.ERROR, message: 'http_500' });
    expect(attempt.attributes).toMatchObject({
      'http.response.status_code': 500,
      'svc.endpoint_id': endpointId,
      'svc.attempt.outcome': 'http_500',
      'error.type': 'http_500',
    });
    const settle = one(trace, SPAN.settle);
    expect(settle.attributes).toMatchObject({ 'svc.delivery.status': 'retry_wait', 'svc.settle.applied': true });
    expect(Date.parse(String(settle.attributes['svc.delivery.next_attempt_at']))).toBeGreaterThan(
      traced.stack.h.clock.now().getTime(),
    );
  });
});
