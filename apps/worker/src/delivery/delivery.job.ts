import type { Logger } from 'pino';
import {
  subscriptionDeliveryJob,
  type AttemptOutcome,
  type AttemptResult,
  type ClaimedAttempt,
  type Services,
} from '@svc/core';
import { buildDeliveryHeaders, createEgressClient, type EgressClient, type EgressOutcome } from '@svc/egress';
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
}

export interface DeliveryEngine {
  /** Webhook deliveries: the owned endpoints' lanes, claims and settlements (dispatcher.ts). */
  dispatcher: Dispatcher;
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
  const egress: EgressClient = createEgressClient({ policy: services.urlPolicy });
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
    };
  }

  const dispatcher = new Dispatcher({
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
        metrics.acceptToDeliverySeconds.observe(Math.max(0, (Date.now() - outcome.attempt.dueSince.getTime()) / 1000));
    },
  });
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

  return { dispatcher, subscriptionHandler, close: () => egress.close() };
}
