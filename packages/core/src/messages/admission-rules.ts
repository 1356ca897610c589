import { createHash } from 'node:crypto';
import { billingMonth, priceMicros, unitsFor, type ChargeItem } from '../billing/billing.service.js';
import { RATE_VERSION } from '../catalog/catalog.js';
import type { Limits } from '../catalog/limits.js';
import { addMs, DAY, HOUR, type Clock } from '../common/clock.js';
import type { Actor } from '../common/context.js';
import { invalidField, notFound, ServiceError } from '../common/errors.js';
import { newId } from '../common/ids.js';
import {
  ADMISSION_SLOTS,
  eventTypeKey,
  tenantKey,
  type AdmissionContext,
  type PayerState,
  type TeamState,
} from './admission-context.js';
import type { AdmissionPlan } from './admission-writes.js';
import type { MessageBody } from './message-body.js';
import type { CreateMessageInput } from './message.inputs.js';
import { emptyCounts, type DeliveryCounts } from './message-status.js';
import type { MessageRecord } from './message.view.js';
import { matchEndpoints, type CandidateEndpoint, type MatchedDelivery, type RuleCache } from './matching.js';

/** Who publishes: the origin the message records and, for an endpoint test, the one endpoint it goes to. */
export interface AdmissionOptions {
  origin: 'api' | 'test' | 'source';
  sourceId?: string | null;
  /** Endpoint tests: deliver to this endpoint only, skipping its event types, filter and transform. */
  testEndpointId?: string;
  /** Whose key pays (sources: their billing key). Default: the caller. */
  payer?: Actor;
  /** Sources: the captured bytes as received (the input then has neither payload nor body_base64). */
  body?: MessageBody;
  /** Sources: the message's ID, chosen before admission so that the capture's event-key claim names it at once. */
  messageId?: string;
}

export interface AdmissionRequest {
  actor: Actor;
  input: CreateMessageInput;
  options: AdmissionOptions;
}

/** What a batch has used up so far of each team's slots and queue room and each key's spend. */
export interface Running {
  teams: Map<string, TeamState>;
  payers: Map<string, PayerState>;
}

/**
 * The rules of one admission, decided in memory against the batch's context (admission-context.ts) and what the
 * requests before it in the batch used up, so each request of a batch meets exactly the rules it would meet alone,
 * in the same order and with the same answers.
 */
export class AdmissionRules {
  /** Compiled filters and transforms by endpoint and version. */
  private readonly rules: RuleCache = new Map();

  constructor(private readonly deps: { clock: Clock; limits: Limits }) {}

  /**
   * The rules of one admission, in the order a single request meets them: the body, the delivery window, an
   * admission slot, the tenant and event type, matching and fan-out, the team's queue limits, then the payer's
   * card and spending limit. Uses up the request's share of `running` only when it is admitted.
   */
  plan(
    request: AdmissionRequest,
    accepted: MessageBody | ServiceError,
    context: AdmissionContext,
    running: Running,
    now: Date,
  ): AdmissionPlan {
    const { input, options, actor } = request;
    const { limits, clock } = this.deps;
    if (accepted instanceof ServiceError) throw accepted;
    const body = accepted;
    const { deliverAt, expiresAt } = this.window(input, now);
    const teamId = actor.teamId;
    const team = running.teams.get(teamId)!;
    const slot = team.slots[0];
    if (slot === undefined)
      throw new ServiceError(
        'too_many_concurrent_requests',
        `at most ${ADMISSION_SLOTS} messages of a team are stored at once; retry after the time in Retry-After`,
        { retryAfter: 1 },
      );
    const tenant = context.tenants.get(tenantKey(teamId, input.tenant_id));
    if (tenant?.status !== 'active')
      throw new ServiceError('invalid_field', 'tenant must be an active tenant', { field: 'tenant_id' });
    if (options.origin !== 'test' && context.eventTypes.get(eventTypeKey(teamId, input.event_type)) !== false)
      throw new ServiceError('invalid_event_type', `event type ${input.event_type} is not active in the catalog`, {
        field: 'event_type',
      });

    const deliveries = options.testEndpointId
      ? testDelivery(tenant.endpoints, options.testEndpointId, body)
      : matchEndpoints({
          endpoints: withRequested(tenant.endpoints, input.endpoint_ids ?? null, context),
          requested: input.endpoint_ids ?? null,
          tenantId: input.tenant_id,
          eventType: input.event_type,
          body,
          cache: this.rules,
        });
    this.checkFanout(deliveries, input);
    const storedBytes = body.bytes.length + deliveries.reduce((sum, d) => sum + (d.body?.length ?? 0), 0);
    if (team.pending + deliveries.length > limits.max_pending_deliveries.value)
      throw new ServiceError('queue_full', 'the team has reached its limit of pending deliveries', { retryAfter: 5 });
    if (team.contentBytes + storedBytes > limits.max_content_bytes.value)
      throw new ServiceError('queue_full', 'the team has reached its limit of stored content', { retryAfter: 5 });

    const messageId = options.messageId ?? newId('message', clock);
    const ingestUnits = unitsFor(body.bytes.length, 'webhooks.ingest_64k');
    const deliveryUnits = deliveries.reduce((sum, d) => sum + d.units, 0);
    const charges: ChargeItem[] = [{ meter: 'webhooks.ingest_64k', units: ingestUnits, resourceId: messageId }];
    if (deliveryUnits > 0)
      charges.push({ meter: 'webhooks.delivery_16k', units: deliveryUnits, resourceId: messageId });
    const payer = options.payer ?? actor;
    const price = priceMicros(charges);
    this.checkPayer(running.payers.get(payer.keyId), price, now);

    // Admitted: use up the slot, the queue room and the spend.
    team.slots.shift();
    team.pending += deliveries.length;
    team.contentBytes += storedBytes;
    const spend = running.payers.get(payer.keyId)!;
    spend.spent += price;
    const retainedUntil = new Date(
      Math.max(addMs(now, (team.retentionDays ?? 30) * DAY).getTime(), expiresAt.getTime()),
    );
    const record: MessageRecord = {
      id: messageId,
      tenantId: input.tenant_id,
      eventType: input.event_type,
      externalId: input.external_id ?? null,
      origin: options.origin,
      sourceId: options.sourceId ?? null,
      contentType: body.contentType,
      bodyBytes: body.bytes.length,
      bodySha256: createHash('sha256').update(body.bytes).digest('hex'),
      deliverAt,
      expiresAt,
      retainedUntil,
      redactedAt: null,
      redactionStatus: null,
      contentAvailable: true,
      metadata: input.metadata,
      ingestUnits,
      deliveryUnits,
      priceMicros: price,
      rateVersion: RATE_VERSION,
      createdAt: now,
    };
    return {
      teamId,
      record,
      body,
      deliveries,
      deliveryIds: deliveries.map(() => newId('delivery', clock)),
      shard: slot,
      storedBytes,
      payer,
      charges,
      idempotency: null,
      traceparent: null,
    };
  }

  /**
   * The payer's card, its month (closed by a process whose clock is ahead, while this one's is still in it: 503,
   * retry) and its monthly spending limit against what the batch charged it already.
   */
  private checkPayer(payer: PayerState | undefined, price: bigint, now: Date): void {
    if (!payer?.card) throw new ServiceError('billing_required', 'the account has no payment card');
    if (payer.closed && billingMonth(this.deps.clock.now()) === billingMonth(now))
      throw new ServiceError('temporarily_unavailable', 'the billing month was closed while charging; retry', {
        retryAfter: 1,
      });
    // A closed month whose successor the clock is in now: BillingService.charge moves the charge there.
    if (!payer.closed && payer.limit !== null && payer.spent + price > payer.limit)
      throw new ServiceError('spending_limit', "the charge would exceed the paying key's monthly spending limit");
  }

  /** The delivery counts of a message just admitted. */
  initialCounts(plan: AdmissionPlan, now: Date): DeliveryCounts {
    const counts = emptyCounts();
    counts[plan.record.deliverAt > now ? 'scheduled' : 'queued'] = plan.deliveries.length;
    return counts;
  }

  /** deliver_at at most 7 days ahead; expires_at after it and at most 72 hours later (the default). */
  private window(input: CreateMessageInput, now: Date): { deliverAt: Date; expiresAt: Date } {
    const { limits } = this.deps;
    const deliverAt = input.deliver_at ? new Date(input.deliver_at) : now;
    if (deliverAt.getTime() > addMs(now, limits.max_schedule_days.value * DAY).getTime())
      throw invalidField('deliver_at', `deliver_at is at most ${limits.max_schedule_days.value} days ahead`);
    const windowMs = limits.delivery_window_hours.value * HOUR;
    const expiresAt = input.expires_at ? new Date(input.expires_at) : addMs(deliverAt, windowMs);
    if (expiresAt <= deliverAt) throw invalidField('expires_at', 'expires_at must be after deliver_at');
    if (expiresAt.getTime() > deliverAt.getTime() + windowMs)
      throw invalidField(
        'expires_at',
        `expires_at is at most ${limits.delivery_window_hours.value} hours after deliver_at`,
      );
    if (expiresAt <= now) throw invalidField('expires_at', 'expires_at is in the past: no attempt could start');
    return { deliverAt, expiresAt };
  }

  private checkFanout(deliveries: MatchedDelivery[], input: CreateMessageInput): void {
    const { limits } = this.deps;
    if (deliveries.length > limits.max_fanout_endpoints.value)
      throw invalidField(
        input.endpoint_ids ? 'endpoint_ids' : 'tenant_id',
        `the message matches more than ${limits.max_fanout_endpoints.value} endpoints`,
      );
    const total = deliveries.reduce((sum, d) => sum + d.bodyBytes, 0);
    // Without endpoint_ids the body is what the sender can change, not the tenant it names.
    const bodyField = input.body_base64 !== undefined ? 'body_base64' : 'payload';
    if (total > limits.max_transformed_bytes_per_message.value)
      throw invalidField(
        input.endpoint_ids ? 'endpoint_ids' : bodyField,
        'the bodies for all matched endpoints exceed 8 MiB in all',
      );
  }
}

/** The tenant's endpoints plus the requested ones that are deleted or of another tenant (matching refuses those). */
function withRequested(
  endpoints: CandidateEndpoint[],
  requested: readonly string[] | null,
  context: AdmissionContext,
): CandidateEndpoint[] {
  if (requested === null) return endpoints;
  // Read for the batch as a whole: an endpoint another request's tenant owns is one of this tenant's here.
  const others = requested.flatMap((id) => {
    const other = context.foreignEndpoints.get(id);
    return other && !endpoints.some((e) => e.id === id) ? [other] : [];
  });
  return others.length === 0 ? endpoints : [...endpoints, ...others];
}

function testDelivery(endpoints: CandidateEndpoint[], endpointId: string, body: MessageBody): MatchedDelivery[] {
  const endpoint = endpoints.find((e) => e.id === endpointId && !e.deleted);
  if (!endpoint) throw notFound('endpoint');
  if (endpoint.status !== 'enabled')
    throw new ServiceError('invalid_state', `a ${endpoint.status} endpoint cannot be tested`);
  return [
    {
      endpointId,
      body: null,
      bodyBytes: body.bytes.length,
      units: unitsFor(body.bytes.length, 'webhooks.delivery_16k'),
    },
  ];
}
