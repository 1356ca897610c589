import type { Span } from '@opentelemetry/api';
import type { DataSource, EntityManager } from 'typeorm';
import { billingMonth, type BillingService, type ChargeItem } from '../billing/billing.service.js';
import type { Limits } from '../catalog/limits.js';
import { GroupBatcher } from '../common/group-batcher.js';
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
import { AdmissionContextReader, type QueueLocks } from './admission-context.js';
import { AdmissionRules, type AdmissionRequest, type Running } from './admission-rules.js';
import { writeAdmissions, type AdmissionPlan } from './admission-writes.js';
import { acceptBody, type MessageBody } from './message-body.js';
import { toMessageView, type MessageView } from './message.view.js';

export type { AdmissionOptions, AdmissionRequest } from './admission-rules.js';

/** How long the first admission of a batch waits for others when no batch runs. */
export const ADMISSION_WINDOW_MS = 2;

/**
 * A request that finds admission idle this long starts its batch at once, without the window (GroupBatcher): a pace
 * that leaves 20 ms gaps is under 50 requests a second, where a batch of one costs nothing that matters, and under
 * load batches follow each other without a gap, so their size does not change.
 */
export const ADMISSION_ALONE_AFTER_IDLE_MS = 20;
/** The most admissions one batch (one transaction) takes. */
export const MAX_ADMISSION_BATCH = 100;
/**
 * Batches of one server process running at once: a team is in one of them at a time, so a team whose batches are
 * large (a hot team) delays no other team's batch.
 */
export const MAX_CONCURRENT_BATCHES = 2;
/**
 * A batch starts beside a running one only once that one has run this long: batches of a few milliseconds run one
 * after the other and grow with the load (fewer round trips per message), a long one (a team's large fan-out, a
 * slow statement) holds no other team back for longer than this. A batch of a single team holds nobody back
 * (GroupBatcher: nobody could have joined it).
 */
export const BESIDE_AFTER_MS = 20;
/**
 * The most transactions of one server process waiting for busy teams' queue locks at once (each holds a pooled
 * connection while it waits); more busy teams take turns.
 */
export const MAX_BUSY_TEAM_BATCHES = 2;

/**
 * The most admissions one server process holds at once, waiting for their batch or in it, and the most bytes of
 * their bodies: past either, a new admission is refused at once (503 temporarily_unavailable, Retry-After: 1)
 * instead of waiting with its body in memory while a batch waits on a lock (docs/admission.md).
 */
export interface AdmissionQueueBounds {
  admissions: number;
  bytes: number;
}

export const ADMISSION_QUEUE_BOUNDS: AdmissionQueueBounds = { admissions: 1_000, bytes: 64 * 1_048_576 };

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
  /** Default: ADMISSION_QUEUE_BOUNDS. */
  queueBounds?: AdmissionQueueBounds;
}

/** An admission waiting for its batch. */
interface Pending {
  request: AdmissionRequest;
  idempotency: AdmissionIdempotency<unknown> | null;
  /** The accepted body, or why it is refused (checked after the key, like every other rule of the work). */
  body: MessageBody | ServiceError;
  /** This admission's span (a child of the request's); the message keeps its traceparent. */
  span: Span;
  settle(verdict: Decided): void;
  fail(error: unknown): void;
}

type Verdict =
  /** The team's queue lock was held elsewhere: the request waits for it in a batch of its team (runBusyBatch). */
  | { kind: 'busy' }
  | { kind: 'refused'; error: unknown }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'admitted'; value: unknown };

/** What a request's batch decided for it: anything but waiting for its team. */
type Decided = Exclude<Verdict, { kind: 'busy' }>;

/**
 * Message admission (POST /messages, GraphQL publish, endpoint tests, source captures). Concurrent admissions of
 * this process coalesce into batches, one transaction each (docs/admission.md): one statement takes the requests'
 * Idempotency-Keys, the teams' queue locks and admission slots and reads everything the batch decides on; every
 * request is then decided on its own, in arrival order, against what the requests before it used up; one statement
 * writes all admitted ones; the commit answers them all. A refusal answers its own request only; a batch that fails
 * as a whole runs each of its requests again alone.
 *
 * Teams do not wait for each other: a batch takes the teams' queue locks without waiting and leaves out a team whose
 * lock is held elsewhere (its bulk replay, another process's batch). That team's requests, and those that arrive
 * while it has some waiting, are admitted in batches of their own team that wait for the lock, beside the batches of
 * every other team (at most MAX_BUSY_TEAM_BATCHES at once).
 */
export class AdmissionService {
  private readonly context = new AdmissionContextReader();
  private readonly rules: AdmissionRules;
  private readonly batches = new GroupBatcher<Pending>({
    windowMs: ADMISSION_WINDOW_MS,
    startAloneAfterIdleMs: ADMISSION_ALONE_AFTER_IDLE_MS,
    maxBatch: MAX_ADMISSION_BATCH,
    maxConcurrent: MAX_CONCURRENT_BATCHES,
    besideAfterMs: BESIDE_AFTER_MS,
    run: (batch) => this.runBatch(batch),
    exclusiveKey: sameKey,
    // A team's requests run in one batch at a time, in order; other teams' batches run beside it.
    groupOf: (pending) => pending.request.actor.teamId,
  });
  /** Per busy team, its requests waiting for the team's queue lock, one batch at a time. */
  private readonly busyTeams = new Map<string, GroupBatcher<Pending>>();
  /** Busy teams' batches running (at most MAX_BUSY_TEAM_BATCHES) and the turns of the others. */
  private busyRunning = 0;
  private readonly busyTurns: (() => void)[] = [];

  /** Admissions of this process waiting for their batch or in it, and their bodies' bytes. */
  private readonly held = { admissions: 0, bytes: 0 };
  private readonly bounds: AdmissionQueueBounds;

  constructor(private readonly deps: AdmissionServiceDeps) {
    this.rules = new AdmissionRules(deps);
    this.bounds = deps.queueBounds ?? ADMISSION_QUEUE_BOUNDS;
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
      [verdict] = (await this.decideAndWrite(tx, [pending], 'wait')) as [Verdict];
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
    settle: (verdict: Decided) => void,
    fail: (error: unknown) => void,
  ): void {
    const prepared = this.prepare(request, idempotency);
    const bytes = prepared.body instanceof ServiceError ? 0 : prepared.body.bytes.length;
    let held = false;
    const release = () => {
      if (!held) return;
      held = false;
      this.hold(-1, -bytes);
    };
    const pending: Pending = {
      ...prepared,
      settle: (verdict) => {
        release();
        endAdmissionSpan(prepared.span, verdict);
        if (verdict.kind === 'refused') this.countRefusal(verdict.error);
        settle(verdict);
      },
      fail(error) {
        release();
        endAdmissionSpan(prepared.span, { kind: 'refused', error });
        fail(error);
      },
    };
    // Without a key nothing comes before the body's own rules: refuse at once, off the batch.
    if (!idempotency && pending.body instanceof ServiceError) {
      this.countRefusal(pending.body);
      return pending.fail(pending.body);
    }
    const overloaded = this.overloaded(bytes);
    if (overloaded) {
      this.countRefusal(overloaded);
      return pending.fail(overloaded);
    }
    held = true;
    this.hold(1, bytes);
    // A team with requests waiting for its lock keeps the order of its requests: later ones wait behind them.
    const busy = this.busyTeams.get(request.actor.teamId);
    if (busy) busy.add(pending);
    else this.batches.add(pending);
  }

  /** Requests whose team's queue lock was held elsewhere: they wait for it in batches of their team. */
  private waitForTeam(pending: Pending): void {
    const teamId = pending.request.actor.teamId;
    let team = this.busyTeams.get(teamId);
    if (!team) {
      team = new GroupBatcher<Pending>({
        windowMs: 0,
        maxBatch: MAX_ADMISSION_BATCH,
        run: (batch) => this.runBusyBatch(teamId, batch),
        exclusiveKey: sameKey,
      });
      this.busyTeams.set(teamId, team);
    }
    team.add(pending);
  }

  /** One batch of a busy team: waits for its turn, then for the lock; the team's queue ends once it is empty. */
  private async runBusyBatch(teamId: string, batch: Pending[]): Promise<void> {
    if (this.busyRunning >= MAX_BUSY_TEAM_BATCHES) await new Promise<void>((resolve) => this.busyTurns.push(resolve));
    this.busyRunning += 1;
    try {
      await this.runBatch(batch, 'wait');
    } finally {
      this.busyRunning -= 1;
      this.busyTurns.shift()?.();
      // Called by the team's batcher before it marks itself idle: look once it has.
      setImmediate(() => {
        const team = this.busyTeams.get(teamId);
        if (team?.idle) this.busyTeams.delete(teamId);
      });
    }
  }

  private hold(admissions: number, bytes: number): void {
    this.held.admissions += admissions;
    this.held.bytes += bytes;
    this.deps.metrics.admissionsHeld.set(this.held.admissions);
    this.deps.metrics.admissionBytesHeld.set(this.held.bytes);
  }

  /** The refusal of an admission this process cannot hold now (its queue is at a bound), or null. */
  private overloaded(bytes: number): ServiceError | null {
    const { admissions, bytes: maxBytes } = this.bounds;
    const what =
      this.held.admissions + 1 > admissions
        ? `${admissions.toLocaleString('en-US')} admissions`
        : this.held.bytes + bytes > maxBytes
          ? `${maxBytes.toLocaleString('en-US')} bytes of message bodies`
          : null;
    if (what === null) return null;
    return new ServiceError(
      'temporarily_unavailable',
      `this server is holding ${what} waiting to be stored, its most; retry after the time in Retry-After ` +
        '(with the same Idempotency-Key)',
      { retryAfter: 1 },
    );
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
  private async runBatch(batch: Pending[], locks: QueueLocks = 'skip_busy'): Promise<void> {
    const span = tracer().startSpan(SPAN.admissionBatch, {
      root: true,
      links: linksTo(batch.map((pending) => pending.span.spanContext())),
    });
    if (span.isRecording()) span.setAttribute(ATTR.batchSize, batch.length);
    try {
      if (batch.length === 1) return await this.runAlone(batch[0]!, locks);
      let verdicts: Verdict[];
      try {
        verdicts = await this.deps.db.transaction((tx) => this.decideAndWrite(tx, batch, locks));
      } catch (error) {
        markFailed(span, errorReason(error));
        await Promise.all(batch.map((pending) => this.runAlone(pending, locks)));
        return;
      }
      batch.forEach((pending, i) => this.conclude(pending, verdicts[i]!));
    } finally {
      span.end();
    }
  }

  private async runAlone(pending: Pending, locks: QueueLocks): Promise<void> {
    try {
      const [verdict] = await retryOnConflict(() =>
        this.deps.db.transaction((tx) => this.decideAndWrite(tx, [pending], locks)),
      );
      this.conclude(pending, verdict!);
    } catch (error) {
      pending.fail(error);
    }
  }

  private conclude(pending: Pending, verdict: Verdict): void {
    if (verdict.kind === 'busy') this.waitForTeam(pending);
    else pending.settle(verdict);
  }

  /** Reads the context, decides every request in order, writes the admitted ones; the verdicts in request order. */
  private async decideAndWrite(
    tx: EntityManager,
    batch: readonly Omit<Pending, 'settle' | 'fail'>[],
    locks: QueueLocks,
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
      locks,
    );
    const running: Running = { teams: context.teams, payers: context.payers };
    const plans: AdmissionPlan[] = [];
    const verdicts = batch.map((pending, i): Verdict => {
      if (context.busy.has(pending.request.actor.teamId)) return { kind: 'busy' };
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

/** Two requests with one key never share a batch: the later one runs after the first committed (and replays it). */
function sameKey(pending: Pending): string | null {
  return pending.idempotency ? `${pending.request.actor.teamId}\u0000${pending.idempotency.key}` : null;
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
