import type { Logger } from 'pino';
import {
  subscriptionDeliveryJob,
  type AttemptOutcome,
  type AttemptResult,
  type ClaimedAttempt,
  type Services,
} from '@svc/core';
import {
  buildDeliveryHeaders,
  createEgressClient,
  type EgressClient,
  type EgressClientOptions,
  type EgressOutcome,
} from '@svc/egress';
import { signPayload, signSvcSignature } from '@svc/signing';
import { defineJobHandler, type JobHandler } from '../jobs/job.js';
import { Dispatcher } from './dispatcher.js';

export interface DeliveryEngineOptions {
  /** Shown in the User-Agent of every delivery. */
  docsUrl: string;
  /** This worker process's ID in dispatch_workers (leases and partition ownership name it). */
  workerId: string;
  logger: Logger;
  /** Event subscription jobs of this process running at once. */
  concurrency?: number;
  /** Tests: the receivers' certificate authority and a fixed name table for the egress client. */
  egress?: Pick<EgressClientOptions, 'ca' | 'lookup'>;
}

export interface DeliveryEngine {
  /**
   * Webhook deliveries: the owned endpoints' lanes, claims and settlements (dispatcher.ts). A new one after each
   * stand-down (a claim met secrets sealed with another key; see standDownFor).
   */
  readonly dispatcher: Dispatcher;
  /** Stops webhook deliveries for good: the dispatcher and any stand-down's restart. */
  stopDispatch(): Promise<void>;
  /** Event subscription deliveries (the platform API): same egress client, signed with Svc-Signature. */
  subscriptionHandler: JobHandler<{ delivery_id: string }>;
  close(): Promise<void>;
}

function toResult(outcome: EgressOutcome): AttemptResult {
  if (outcome.kind === 'response')
    return { kind: 'response', status: outcome.status, retryAfterSeconds: outcome.retryAfterSeconds };
  if (outcome.kind === 'unsafe_destination')
    return {
      kind: 'unsafe_destination',
      reason: outcome.reason,
      resolvesToPrivateAddress: outcome.resolvesToPrivateAddress,
    };
  return { kind: outcome.kind, reason: outcome.reason };
}

function outcomeLabel(result: AttemptResult, status: string): string {
  if (result.kind !== 'response') return result.kind;
  return status;
}

/**
 * The delivery engine of a worker process: webhook deliveries go through the dispatcher (claim what the owned
 * endpoints may start, POST the exact bytes through the egress client, settle in batches); event subscription
 * deliveries stay pg-boss jobs. A worker killed between claim and settle loses nothing: its rows become due again
 * once it misses its heartbeats, and the delivery is attempted again with the same webhook-id.
 */
export function createDeliveryEngine(services: Services, options: DeliveryEngineOptions): DeliveryEngine {
  const egress: EgressClient = createEgressClient({ policy: services.urlPolicy, ...options.egress });
  const { metrics } = services;

  async function attempt(claimed: ClaimedAttempt): Promise<AttemptOutcome> {
    // webhook-timestamp is wall-clock time: receivers compare it with their own clocks (300 s of skew allowed).
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signPayload({
      msgId: claimed.messageId,
      timestamp,
      body: claimed.body,
      secrets: claimed.signingSecrets,
    });
    const headers = buildDeliveryHeaders({
      contentType: claimed.contentType,
      docsUrl: options.docsUrl,
      custom: claimed.headers,
      authorization: claimed.authorization,
      msgId: claimed.messageId,
      timestamp,
      signature,
      deliveryId: claimed.deliveryId,
      attemptId: claimed.attemptId,
      eventType: claimed.eventType,
      sequence: claimed.sequence,
    });
    const sent = await egress.post({ url: claimed.url, headers, body: claimed.body, timeoutMs: claimed.timeoutMs });
    const result = toResult(sent);
    metrics.attemptSeconds.observe(sent.durationMs / 1000);
    return {
      attempt: claimed,
      result,
      durationMs: sent.durationMs,
      responseBody: sent.kind === 'response' && sent.body.length > 0 ? sent.body : null,
      jitter: Math.random(),
      failureDetail: sent.kind === 'response' ? null : sent.detail,
    };
  }

  const newDispatcher = () =>
    new Dispatcher({
      services,
      workerId: options.workerId,
      logger: options.logger,
      limits: {
        serviceConcurrency: services.limits.service_concurrency.value,
        dispatchRate: services.limits.dispatch_rate.value,
      },
      send: attempt,
      onSettled(outcome, settled) {
        metrics.attempts.inc({
          outcome: outcomeLabel(outcome.result, settled.applied ? settled.decision.status : 'already_settled'),
        });
        if (settled.applied && settled.decision.status === 'succeeded')
          metrics.acceptToDeliverySeconds.observe(
            Math.max(0, (Date.now() - outcome.attempt.dueSince.getTime()) / 1000),
          );
      },
    });
  const dispatch = standDownOnKeyMismatch(services, options, newDispatcher);
  const subscriptionHandler = defineJobHandler({
    contract: subscriptionDeliveryJob,
    concurrency: options.concurrency ?? 500,
    async run(payload) {
      const claimed = await services.subscriptionDispatch.claim(payload.delivery_id);
      if (!claimed) return;
      const timestamp = Math.floor(Date.now() / 1000);
      const sent = await egress.post({
        url: claimed.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': `svc-event-subscriptions/1 (+${options.docsUrl})`,
          'svc-signature': signSvcSignature({ timestamp, body: claimed.body, secrets: claimed.secrets }),
          'svc-event-id': claimed.eventId,
          'svc-delivery-id': claimed.deliveryId,
        },
        body: claimed.body,
        timeoutMs: claimed.timeoutMs,
      });
      metrics.attemptSeconds.observe(sent.durationMs / 1000);
      const verdict = await services.subscriptionDispatch.settle({ claimed, sent });
      metrics.subscriptionAttempts.inc({ outcome: verdict.kind });
    },
  });

  return {
    get dispatcher() {
      return dispatch.current();
    },
    stopDispatch: () => dispatch.stop(),
    subscriptionHandler,
    close: () => egress.close(),
  };
}

/** The first stand-down; each one that follows within STAND_DOWN_MAX_MS of rejoining lasts twice the one before. */
export const STAND_DOWN_FIRST_MS = 10_000;
export const STAND_DOWN_MAX_MS = 10 * 60_000;

/**
 * A claim met secrets sealed with another key (docs/operations.md, "A secret sealed with another key"): the process
 * has the wrong SVC_ENCRYPTION_KEY, so it stands down. The dispatcher stops claiming, lets the attempts it started
 * settle and gives up its endpoint partitions, which the other workers take within a heartbeat; the deliveries it
 * handed back unsent go with them. After a pause (10 s, doubling while it keeps happening, at most 10 minutes) a new
 * dispatcher rejoins: a process that is wrong stands down again at its first claim, one that met a stray secret
 * delivers the rest. svc_worker_standing_down is 1 meanwhile.
 */
function standDownOnKeyMismatch(
  services: Services,
  options: DeliveryEngineOptions,
  newDispatcher: () => Dispatcher,
): { current(): Dispatcher; stop(): Promise<void> } {
  let dispatcher = newDispatcher();
  let standing = false;
  let stopped = false;
  let pauseMs = 0;
  let rejoinedAt = 0;
  let rejoin: NodeJS.Timeout | null = null;
  const unsubscribe = services.keyMismatches.onMismatch((notice) => {
    // Notices of other workers of this process (tests run several over one core) are theirs.
    if (notice.workerId !== options.workerId || standing || stopped) return;
    standing = true;
    pauseMs =
      Date.now() - rejoinedAt > STAND_DOWN_MAX_MS ? STAND_DOWN_FIRST_MS : Math.min(STAND_DOWN_MAX_MS, pauseMs * 2);
    services.metrics.standingDown.set(1);
    options.logger.error(
      { worker_key_id: notice.workerKeyId, sealed_key_ids: notice.sealedKeyIds, pause_ms: pauseMs },
      `this worker's SVC_ENCRYPTION_KEY (key ID ${notice.workerKeyId}) cannot open secrets sealed with key ` +
        `${notice.sealedKeyIds.join(', ')}: it stops delivering for ${pauseMs / 1000} s and its deliveries go to other workers`,
    );
    const leaving = dispatcher;
    void leaving.stop().then(() => {
      if (stopped) return;
      rejoin = setTimeout(() => {
        rejoin = null;
        if (stopped) return;
        dispatcher = newDispatcher();
        rejoinedAt = Date.now();
        standing = false;
        services.metrics.standingDown.set(0);
        void dispatcher.start().then(
          () => options.logger.info({ stood_down_ms: pauseMs }, 'rejoined delivery after standing down'),
          (error: unknown) => options.logger.error({ err: error }, 'rejoining failed'),
        );
      }, pauseMs);
    });
  });
  return {
    current: () => dispatcher,
    async stop() {
      stopped = true;
      unsubscribe();
      if (rejoin) clearTimeout(rejoin);
      await dispatcher.stop();
    },
  };
}
