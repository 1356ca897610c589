import { SpanKind, trace, type Context, type Span, type SpanContext } from '@opentelemetry/api';
import {
  ATTR,
  contextOf,
  describeResult,
  errorReason,
  isSuccess,
  linksTo,
  markFailed,
  receiverAttributes,
  SPAN,
  spanContextOf,
  tracer,
  type AttemptOutcome,
  type ClaimedAttempt,
  type ClaimResult,
  type SettledOutcome,
} from '@svc/core';

/**
 * The delivery engine's spans (docs/operations.md, "Tracing"). A claim and a settlement batch serve many traces, so
 * each is a root span of its own with links; everything one attempt does continues the trace of its message's
 * admission, read back from the traceparent the message stored:
 *
 *   admission (server)  <-  delivery.job  <-  delivery.attempt, delivery.settle
 *
 * With tracing off every call here is the API's no-op, and no attribute object is built.
 */

/** An outcome waiting for its settlement batch, with the span that waits for it. */
export interface PendingSettle {
  outcome: AttemptOutcome;
  span: Span;
}

export function startClaimSpan(workerId: string, endpoints: number): Span {
  const span = tracer().startSpan(SPAN.claim, { root: true });
  if (span.isRecording()) span.setAttributes({ [ATTR.workerId]: workerId, [ATTR.claimEndpoints]: endpoints });
  return span;
}

/** Ends a claim's span with what it claimed, linked to the admissions of the claimed deliveries. */
export function endClaimSpan(span: Span, result: ClaimResult): void {
  if (span.isRecording()) {
    span.setAttributes({ [ATTR.claimAttempts]: result.attempts.length, [ATTR.claimFinished]: result.finished.length });
    span.addLinks(linksTo(result.attempts.map((attempt) => spanContextOf(attempt.traceparent))));
  }
  span.end();
}

/** The span of one claimed attempt in this worker, from its claim to its settlement, and the context of its children. */
export function startJobSpan(
  attempt: ClaimedAttempt,
  claim: SpanContext,
  workerId: string,
): { span: Span; context: Context } {
  const parent = contextOf(attempt.traceparent);
  const span = tracer().startSpan(SPAN.job, { links: linksTo([claim]) }, parent);
  if (span.isRecording())
    span.setAttributes({
      [ATTR.workerId]: workerId,
      [ATTR.teamId]: attempt.teamId,
      [ATTR.messageId]: attempt.messageId,
      [ATTR.deliveryId]: attempt.deliveryId,
      [ATTR.endpointId]: attempt.endpointId,
      [ATTR.attemptNumber]: attempt.attemptNumber,
    });
  return { span, context: trace.setSpan(parent, span) };
}

/** Ends a job's span; a job whose attempt did not succeed is marked failed with the attempt's outcome. */
export function endJobSpan(span: Span, outcome: AttemptOutcome | null): void {
  if (outcome && !isSuccess(outcome.result) && span.isRecording()) markFailed(span, attemptOutcome(outcome));
  span.end();
}

/** The POST to the receiver in a client span: where it went (scheme, host, port), its status code and outcome. */
export async function sendTraced(
  attempt: ClaimedAttempt,
  parent: Context,
  send: (attempt: ClaimedAttempt) => Promise<AttemptOutcome>,
): Promise<AttemptOutcome> {
  const span = tracer().startSpan(SPAN.attempt, { kind: SpanKind.CLIENT }, parent);
  if (span.isRecording())
    span.setAttributes({
      'http.request.method': 'POST',
      ...receiverAttributes(attempt.url),
      [ATTR.endpointId]: attempt.endpointId,
      [ATTR.deliveryId]: attempt.deliveryId,
      [ATTR.attemptId]: attempt.attemptId,
      [ATTR.attemptNumber]: attempt.attemptNumber,
      [ATTR.attemptTrigger]: attempt.trigger,
    });
  try {
    const outcome = await send(attempt);
    if (span.isRecording()) {
      const { result } = outcome;
      span.setAttributes({
        [ATTR.attemptOutcome]: attemptOutcome(outcome),
        [ATTR.attemptDurationMs]: outcome.durationMs,
      });
      if (result.kind === 'response') span.setAttribute('http.response.status_code', result.status);
      if (!isSuccess(result)) markFailed(span, describeResult(result));
    }
    return outcome;
  } catch (error) {
    markFailed(span, errorReason(error));
    throw error;
  } finally {
    span.end();
  }
}

/** `succeeded`, or what failed: http_<status>, timeout, network_error, tls_error, unsafe_destination. */
export function attemptOutcome(outcome: AttemptOutcome): string {
  return isSuccess(outcome.result) ? 'succeeded' : describeResult(outcome.result);
}

/** Hands an outcome to the next settlement batch, in a span that says what the settlement decided. */
export async function settleTraced(
  outcome: AttemptOutcome,
  parent: Context,
  submit: (pending: PendingSettle) => Promise<SettledOutcome>,
): Promise<SettledOutcome> {
  const span = tracer().startSpan(SPAN.settle, {}, parent);
  try {
    const settled = await submit({ outcome, span });
    if (span.isRecording()) {
      const { decision } = settled;
      span.setAttributes({ [ATTR.deliveryStatus]: decision.status, [ATTR.settleApplied]: settled.applied });
      if (decision.status === 'retry_wait') span.setAttribute(ATTR.nextAttemptAt, decision.nextAttemptAt.toISOString());
    }
    return settled;
  } catch (error) {
    markFailed(span, errorReason(error));
    throw error;
  } finally {
    span.end();
  }
}

/** Runs one settlement statement in a root span linked to the settle spans of its outcomes. */
export async function settleBatchTraced<T>(
  pending: readonly PendingSettle[],
  run: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer().startSpan(SPAN.settleBatch, {
    root: true,
    links: linksTo(pending.map((p) => p.span.spanContext())),
  });
  if (span.isRecording()) span.setAttribute(ATTR.batchSize, pending.length);
  try {
    return await run(span);
  } finally {
    span.end();
  }
}
