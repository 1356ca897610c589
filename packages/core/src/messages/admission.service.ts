import type { Span } from '@opentelemetry/api';
import type { DataSource, EntityManager } from 'typeorm';
import { billingMonth, type BillingService, type ChargeItem } from '../billing/billing.service.js';
import type { Limits } from '../catalog/limits.js';
import { SerialBatcher } from '../common/serial-batcher.js';
import type { Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { isServiceError, ServiceError } from '../common/errors.js';
import { retryOnConflict } from '../common/transaction.js';
import type { Metrics } from '../metrics/metrics.js';
import {
  storedIdempotencyKey,
  type IdempotentResult,
  type RunOnceOutcome,
  type StoredResponse,
} from '../idempotency/idempotency.service.js';
import { ATTR, errorReason, linksTo, markFailed, SPAN, traceparentOf, tracer } from '../tracing/tracing.js';
import { AdmissionContextReader } from './admission-context.js';
import { AdmissionRules, type AdmissionRequest, type Running } from './admission-rules.js';
import { writeAdmissions, type AdmissionPlan } from './admission-writes.js';
import { acceptBody, type MessageBody } from './message-body.js';
import { toMessageView, type MessageView } from './message.view.js';

export type { AdmissionOptions, AdmissionRequest } from './admission-rules.js';

/** How long the first admission of a batch waits for others when no batch runs. */
export const ADMISSION_WINDOW_MS = 2;
/** The most admissions one batch (one transaction) takes. */
export const MAX_ADMISSION_BATCH = 100;

/**
 * An admission under an Idempotency-Key, with the same rules as IdempotencyService.runOnce: `keep` turns the
 * admitted message into the response kept for replays and the value handed back.
 */
export interface AdmissionIdempotency<T> {
  key: string;
  fingerprint: string;
  keep(view: MessageView): IdempotentResult<T>;
}

export interface AdmissionServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  billing: BillingService;
  /** Refusals are counted by reason (svc_admission_refusals_total). */
  metrics: Metrics;
}

/** An admission waiting for its batch. */
interface Pending {
  request: AdmissionRequest;
  idempotency: AdmissionIdempotency<unknown> | null;
  /** The accepted body, or why it is refused (checked after the key, like every other rule of the work). */
  body: MessageBody | ServiceError;
  /** This admission's span (a child of the request's); the message keeps its traceparent. */
  span: Span;
  settle(verdict: Verdict): void;
  fail(error: unknown): void;
}

type Verdict =
  | { kind: 'refused'; error: unknown }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'admitted'; value: unknown };

/**
 * Message admission (POST /messages, GraphQL publish, endpoint tests, source captures). Concurrent admissions of
 * this process coalesce into batches, one transaction each (docs/admission.md): one statement takes the requests'
 * Idempotency-Keys, the teams' queue locks and admission slots and reads everything the batch decides on; every
 * request is then decided on its own, in arrival order, against what the requests before it used up; one statement
 * writes all admitted ones; the commit answers them all. A refusal answers its own request only; a batch that fails
 * as a whole runs each of its requests again alone.
 */
export class AdmissionService {
  private readonly context = new AdmissionContextReader();
  private readonly rules: AdmissionRules;
  private readonly batches = new SerialBatcher<Pending>({
    windowMs: ADMISSION_WINDOW_MS,
    maxBatch: MAX_ADMISSION_BATCH,
    run: (batch) => this.runBatch(batch),
    // Two requests with one key never share a batch: the later one runs after the first committed (and replays it).
    exclusiveKey: (p) => (p.idempotency ? `${p.request.actor.teamId}\u0000${p.idempotency.key}` : null),
  });

  constructor(private readonly deps: AdmissionServiceDeps) {
    this.rules = new AdmissionRules(deps);
  }

  /** Admits one message in a batch; answers once the batch committed. */
  admit(request: AdmissionRequest): Promise<MessageView> {
    return new Promise((resolve, reject) =>
      this.enqueue(
        request,
        null,
        (verdict) => {
          if (verdict.kind === 'admitted') resolve(verdict.value as MessageView);
          else reject(verdict.kind === 'refused' ? verdict.error : new Error('admission: replay without a key'));
        },
        reject,
      ),
    );
  }

  /** Admits one message under an Idempotency-Key in a batch: executed once, or the kept response of the first. */
  admitOnce<T>(request: AdmissionRequest, idempotency: AdmissionIdempotency<T>): Promise<RunOnceOutcome<T>> {
    const scoped = { ...idempotency, key: storedIdempotencyKey(request.actor, idempotency.key) };
    return new Promise((resolve, reject) =>
      this.enqueue(
        request,
        scoped,
        (verdict) => {
          if (verdict.kind === 'refused') reject(verdict.error);
          else if (verdict.kind === 'replay') resolve({ outcome: 'replay', response: verdict.response });
          else resolve({ outcome: 'executed', value: verdict.value as T });
        },
        reject,
      ),
    );
  }

  /** Admits one message in the caller's transaction (it holds whatever else the work needs): a batch of one. */
  async admitInTransaction(tx: EntityManager, request: AdmissionRequest): Promise<MessageView> {
    const pending = this.prepare(request, null);
    let verdict: Verdict;
    try {
      [verdict] = (await this.decideAndWrite(tx, [pending])) as [Verdict];
    } catch (error) {
      endAdmissionSpan(pending.span, { kind: 'refused', error });
      throw error;
    }
    // The caller's transaction may still fail after this; the span tells what admission decided.
    endAdmissionSpan(pending.span, verdict);
    if (verdict.kind === 'admitted') return verdict.value as MessageView;
    if (verdict.kind === 'refused') this.countRefusal(verdict.error);
    throw verdict.kind === 'refused' ? verdict.error : new Error('admission: replay without a key');
  }

  private enqueue(
    request: AdmissionRequest,
    idempotency: AdmissionIdempotency<unknown> | null,
    settle: (verdict: Verdict) => void,
    fail: (error: unknown) => void,
  ): void {
    const prepared = this.prepare(request, idempotency);
    const pending: Pending = {
      ...prepared,
      settle: (verdict) => {
        endAdmissionSpan(prepared.span, verdict);
        if (verdict.kind === 'refused') this.countRefusal(verdict.error);
        settle(verdict);
      },
      fail(error) {
        endAdmissionSpan(prepared.span, { kind: 'refused', error });
        fail(error);
      },
    };
    // Without a key nothing comes before the body's own rules: refuse at once, off the batch.
    if (!idempotency && pending.body instanceof ServiceError) {
      this.countRefusal(pending.body);
      return pending.fail(pending.body);
    }
    this.batches.add(pending);
  }

  /** A refusal by the admission's rules (a ServiceError's code); an unexpected error is not a refusal. */
  private countRefusal(error: unknown): void {
    if (isServiceError(error)) this.deps.metrics.admissionRefusals.inc({ reason: error.code });
  }

  private prepare(
    request: AdmissionRequest,
    idempotency: AdmissionIdempotency<unknown> | null,
  ): Omit<Pending, 'settle' | 'fail'> {
    let body: MessageBody | ServiceError;
    try {
      body = request.options.body ?? acceptBody(request.input);
    } catch (error) {
      if (!isServiceError(error)) throw error;
      body = error;
    }
    return { request, idempotency, body, span: startAdmissionSpan(request) };
  }

  /**
   * One transaction for the batch; when it fails as a whole, one transaction per request. Its span is a root of its
   * own (the batch serves many traces) linked to the admission spans it carries.
   */
  private async runBatch(batch: Pending[]): Promise<void> {
    const span = tracer().startSpan(SPAN.admissionBatch, {
      root: true,
      links: linksTo(batch.map((pending) => pending.span.spanContext())),
    });
    if (span.isRecording()) span.setAttribute(ATTR.batchSize, batch.length);
    try {
      if (batch.length === 1) return await this.runAlone(batch[0]!);
      let verdicts: Verdict[];
      try {
        verdicts = await this.deps.db.transaction((tx) => this.decideAndWrite(tx, batch));
      } catch (error) {
        markFailed(span, errorReason(error));
        await Promise.all(batch.map((pending) => this.runAlone(pending)));
        return;
      }
      batch.forEach((pending, i) => pending.settle(verdicts[i]!));
    } finally {
      span.end();
    }
  }

  private async runAlone(pending: Pending): Promise<void> {
    try {
      const [verdict] = await retryOnConflict(() =>
        this.deps.db.transaction((tx) => this.decideAndWrite(tx, [pending])),
      );
      pending.settle(verdict!);
    } catch (error) {
      pending.fail(error);
    }
  }

  /** Reads the context, decides every request in order, writes the admitted ones; the verdicts in request order. */
  private async decideAndWrite(
    tx: EntityManager,
    batch: readonly Omit<Pending, 'settle' | 'fail'>[],
  ): Promise<Verdict[]> {
    const { clock, billing } = this.deps;
    const now = clock.now();
    const month = billingMonth(now);
    const context = await this.context.read(
      tx,
      batch.map(({ request, idempotency }) => ({
        teamId: request.actor.teamId,
        tenantId: request.input.tenant_id,
        eventType: request.input.event_type,
        idempotencyKey: idempotency?.key ?? null,
        payerKeyId: (request.options.payer ?? request.actor).keyId,
        requestedEndpointIds: request.options.testEndpointId
          ? [request.options.testEndpointId]
          : (request.input.endpoint_ids ?? null),
      })),
      now,
      month,
    );
    const running: Running = { teams: context.teams, payers: context.payers };
    const plans: AdmissionPlan[] = [];
    const verdicts = batch.map((pending, i): Verdict => {
      try {
        const keyState = context.keys[i]!;
        if (pending.idempotency) {
          if (!keyState.locked)
            throw new ServiceError('request_in_progress', 'a request with this Idempotency-Key is still running', {
              retryAfter: 1,
            });
          if (keyState.fingerprint !== null) {
            if (keyState.fingerprint !== pending.idempotency.fingerprint)
              throw new ServiceError('idempotency_conflict', 'this Idempotency-Key was used for a different request');
            return {
              kind: 'replay',
              response: {
                status: keyState.response_status ?? 200,
                headers: keyState.response_headers ?? {},
                body: keyState.response_body === null ? null : Buffer.from(keyState.response_body, 'base64'),
                keyId: keyState.key_id ?? '',
              },
            };
          }
        }
        const plan = this.rules.plan(pending.request, pending.body, context, running, now);
        plan.traceparent = traceparentOf(pending.span);
        if (pending.span.isRecording())
          pending.span.setAttributes({
            // Checked values only: the request's own tenant_id and event_type may be anything until admitted.
            [ATTR.messageId]: plan.record.id,
            [ATTR.tenantId]: plan.record.tenantId,
            [ATTR.eventType]: plan.record.eventType,
            [ATTR.admissionDeliveries]: plan.deliveries.length,
          });
        const view = toMessageView(plan.record, this.rules.initialCounts(plan, now), now, 0);
        if (!pending.idempotency) {
          plans.push(plan);
          return { kind: 'admitted', value: view };
        }
        const { response, value } = pending.idempotency.keep(view);
        plans.push({
          ...plan,
          idempotency: {
            actor: pending.request.actor,
            key: pending.idempotency.key,
            fingerprint: pending.idempotency.fingerprint,
            response,
          },
        });
        return { kind: 'admitted', value };
      } catch (error) {
        return { kind: 'refused', error };
      }
    });
    if (plans.length === 0) return verdicts;
    const charged = await writeAdmissions(tx, plans, now, billing);
    // A key the statement did not charge (its limit moved, its month closed meanwhile) is charged with the rules of
    // a single charge; a refusal there fails the batch, and each request runs again alone.
    for (const [keyId, items] of chargesByPayer(plans))
      if (!charged.has(keyId)) await billing.charge(tx, items.payer, items.items);
    return verdicts;
  }
}

/** An admission's span, a child of whatever is active (the HTTP request's span, through the context manager). */
function startAdmissionSpan(request: AdmissionRequest): Span {
  const span = tracer().startSpan(SPAN.admission);
  if (span.isRecording())
    span.setAttributes({
      [ATTR.teamId]: request.actor.teamId,
      [ATTR.admissionOrigin]: request.options.origin,
    });
  return span;
}

/** Ends an admission's span with what came of it: admitted, replay (a kept response) or refused, with its code. */
function endAdmissionSpan(span: Span, verdict: Verdict): void {
  if (span.isRecording()) {
    span.setAttribute(ATTR.admissionOutcome, verdict.kind);
    if (verdict.kind === 'refused') markFailed(span, errorReason(verdict.error));
  }
  span.end();
}

function chargesByPayer(plans: readonly AdmissionPlan[]): Map<string, { payer: Actor; items: ChargeItem[] }> {
  const byPayer = new Map<string, { payer: Actor; items: ChargeItem[] }>();
  for (const plan of plans) {
    const seen = byPayer.get(plan.payer.keyId) ?? { payer: plan.payer, items: [] };
    seen.items.push(...plan.charges);
    byPayer.set(plan.payer.keyId, seen);
  }
  return byPayer;
}
