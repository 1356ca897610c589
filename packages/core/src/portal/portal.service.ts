import type { DataSource, EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { CallContext, PortalScope } from '../common/context.js';
import { isServiceError, notFound, ServiceError } from '../common/errors.js';
import {
  decodeCursor,
  encodeCursor,
  parseLimit,
  type ListScope,
  type Page,
  type PageRequest,
} from '../common/paging.js';
import { inTransaction, reader } from '../common/transaction.js';
import { formatUsd, parseUsd } from '../catalog/catalog.js';
import type { DeliveryService } from '../deliveries/delivery.service.js';
import type { DeliveryView } from '../deliveries/delivery.view.js';
import type { ListAttemptsQuery, ListDeliveriesQuery } from '../deliveries/delivery.inputs.js';
import type { AttemptView } from '../deliveries/delivery.view.js';
import type { OperationalEventService } from '../events/operational-event.service.js';
import type { PortalEventType } from '../events/operational-event.types.js';
import { EventTypeEntity } from '../event-types/event-type.entity.js';
import { toEventTypeView, type EventTypeView } from '../event-types/event-type.view.js';
import type { EndpointService } from '../endpoints/endpoint.service.js';
import { endpointTestPriceMicros, sendEndpointTest } from '../endpoints/endpoint-test.js';
import { RawJson } from '../common/raw-json.js';
import { CreateEndpointInput, type UpdateEndpointInput } from '../endpoints/endpoint.inputs.js';
import { parseInput } from '../common/validation.js';
import type { EndpointView, EndpointWithSecret } from '../endpoints/endpoint.view.js';
import type { MessageService } from '../messages/message.service.js';
import type { MessageView } from '../messages/message.view.js';
import type { ListMessagesQuery } from '../messages/message.inputs.js';
import type { CreateStreamTokenInput } from '../streams/stream.inputs.js';
import type { StreamConnectionService, StreamConnectionView } from '../streams/stream-connections.service.js';
import type { StreamTokenService, StreamTokenView } from '../streams/stream-tokens.service.js';
import type { PortalEndpointInput, PortalEndpointUpdate } from './portal.inputs.js';

/** The endpoint's signing material as the portal's reveal shows it. */
export interface PortalSigningSecret {
  endpoint: EndpointView;
  /** The current whsec_ secret of an HMAC endpoint; null for ed25519 (see publicKey). */
  secret: string | null;
  publicKey: string | null;
}

export interface PortalServiceDeps {
  db: DataSource;
  clock: Clock;
  endpoints: EndpointService;
  messages: MessageService;
  deliveries: DeliveryService;
  events: OperationalEventService;
  streamTokens: StreamTokenService;
  streamConnections: StreamConnectionService;
}

const PORTAL_TEST_PAYLOAD = '{"test":true,"sent_from":"portal"}';

/** The scope of a portal actor; anything else is refused (the transports only call this with a portal session). */
export function portalScope(ctx: CallContext): PortalScope {
  const scope = ctx.actor.portal;
  if (!scope) throw new ServiceError('portal_access_denied', 'only a portal session uses the portal');
  return scope;
}

function requireManage(scope: PortalScope): void {
  if (scope.capabilities !== 'manage_endpoints')
    throw new ServiceError('portal_access_denied', 'this portal session is read only');
}

/**
 * What a tenant does in the receivers' portal (docs/portal.md), through the services every transport uses: every
 * read is narrowed to the session's tenant (another tenant's ID answers not_found, as another team's does) and
 * every change is recorded as a webhooks.portal.* operational event with the session's ID, in the change's own
 * transaction where the service takes one.
 */
export class PortalService {
  constructor(private readonly deps: PortalServiceDeps) {}

  /**
   * One page of the event types the session offers (its own list, or every active one of the team when it was given
   * none), by name, with their descriptions and examples: a catalog page reads the rows it shows and no more (the
   * team may have 1,000 event types with examples of 16 KiB each).
   */
  async listEventTypes(ctx: CallContext, query: PageRequest): Promise<Page<EventTypeView>> {
    const scope = portalScope(ctx);
    const limit = parseLimit(query.limit);
    const list: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'portal_event_types',
      filters: { session: scope.sessionId },
    };
    const after = decodeCursor(list, query.cursor);
    const rows = await this.offeredEventTypes(ctx, scope)
      .andWhere(after === null ? 'true' : 'e.name > :after', { after })
      .orderBy('e.name', 'ASC')
      .limit(limit + 1)
      .getMany();
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    return { data: page.map(toEventTypeView), nextCursor: more ? encodeCursor(list, page.at(-1)!.name) : null };
  }

  /** The names alone, every one the session offers (what its endpoint forms choose from), by name. */
  async eventTypeNames(ctx: CallContext): Promise<string[]> {
    const rows = await this.offeredEventTypes(ctx, portalScope(ctx))
      .select('e.name', 'name')
      .orderBy('e.name', 'ASC')
      .getRawMany<{ name: string }>();
    return rows.map((row) => row.name);
  }

  private offeredEventTypes(ctx: CallContext, scope: PortalScope) {
    const qb = reader(this.deps.db, ctx)
      .getRepository(EventTypeEntity)
      .createQueryBuilder('e')
      .where('e.team_id = :teamId AND NOT e.archived', { teamId: ctx.actor.teamId });
    return scope.eventTypes === null ? qb : qb.andWhere('e.name = ANY(:names)', { names: scope.eventTypes });
  }

  listEndpoints(ctx: CallContext, query: { limit?: unknown; cursor?: unknown }): Promise<Page<EndpointView>> {
    const scope = portalScope(ctx);
    return this.deps.endpoints.listEndpoints(ctx, { tenant_id: scope.tenantId, ...query });
  }

  async getEndpoint(ctx: CallContext, id: string): Promise<EndpointView> {
    const scope = portalScope(ctx);
    const endpoint = await this.deps.endpoints.getEndpoint(ctx, id);
    if (endpoint.tenantId !== scope.tenantId) throw notFound('endpoint');
    return endpoint;
  }

  async createEndpoint(ctx: CallContext, input: PortalEndpointInput): Promise<EndpointWithSecret> {
    const scope = portalScope(ctx);
    requireManage(scope);
    const events = input.events ?? (scope.eventTypes === null ? ['*'] : [...scope.eventTypes]);
    this.checkEvents(scope, events);
    // Delivery tuning stays at the defaults of the shared schema (the operator's to change).
    const full = parseInput(CreateEndpointInput, {
      tenant_id: scope.tenantId,
      delivery_mode: input.delivery_mode,
      url: input.url,
      name: input.name,
      description: input.description,
      events,
      filter: input.filter,
      headers: input.headers,
      authorization: input.authorization,
      signature_scheme: input.signature_scheme,
    });
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const created = await this.deps.endpoints.createEndpoint({ ...ctx, tx }, full);
      await this.record(tx, ctx, 'webhooks.portal.endpoint.created', created.endpoint.id, {});
      return created;
    });
  }

  async updateEndpoint(ctx: CallContext, id: string, etag: string, input: PortalEndpointUpdate): Promise<EndpointView> {
    const scope = portalScope(ctx);
    requireManage(scope);
    if (input.events !== undefined) this.checkEvents(scope, input.events);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const inner = { ...ctx, tx };
      const current = await this.getEndpoint(inner, id);
      const entity = await this.deps.endpoints.getEndpointEntity(inner, id);
      const change: UpdateEndpointInput = { ...input };
      // A URL on a new host never keeps the old host's credentials: the portal drops them rather than refusing.
      if (input.url !== undefined && this.deps.endpoints.checkUrl(input.url).host !== entity.urlHost) {
        change.headers ??= {};
        change.authorization ??= null;
      }
      const updated = await this.deps.endpoints.updateEndpoint(inner, id, etag, change);
      const changes = Object.keys(input).sort().join(',');
      if (updated.version !== current.version)
        await this.record(tx, ctx, 'webhooks.portal.endpoint.updated', id, { changes: changes || null });
      return updated;
    });
  }

  async deleteEndpoint(ctx: CallContext, id: string, etag: string): Promise<void> {
    requireManage(portalScope(ctx));
    await inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getEndpoint({ ...ctx, tx }, id);
      await this.deps.endpoints.deleteEndpoint({ ...ctx, tx }, id, etag);
      await this.record(tx, ctx, 'webhooks.portal.endpoint.deleted', id, {});
    });
  }

  async resumeEndpoint(ctx: CallContext, id: string, etag: string): Promise<EndpointView> {
    requireManage(portalScope(ctx));
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getEndpoint({ ...ctx, tx }, id);
      const resumed = await this.deps.endpoints.resumeEndpoint({ ...ctx, tx }, id, etag, {});
      await this.record(tx, ctx, 'webhooks.portal.endpoint.resumed', id, {});
      return resumed;
    });
  }

  /** A new secret at once (no overlap: the tenant rotates because it updates its receiver now), shown this once. */
  async rotateSecret(ctx: CallContext, id: string, etag: string): Promise<EndpointWithSecret> {
    requireManage(portalScope(ctx));
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getEndpoint({ ...ctx, tx }, id);
      const rotated = await this.deps.endpoints.rotateSecret({ ...ctx, tx }, id, etag, { overlap_seconds: 0 });
      await this.record(tx, ctx, 'webhooks.portal.endpoint.secret_rotated', id, {});
      return rotated;
    });
  }

  /** The endpoint's current signing secret (HMAC) or public key (ed25519); recorded, read-only sessions included. */
  async revealSecret(ctx: CallContext, id: string): Promise<PortalSigningSecret> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.getEndpoint({ ...ctx, tx }, id);
      const secret =
        endpoint.signatureScheme === 'hmac'
          ? await this.deps.endpoints.credentials.secrets.current(tx, id, endpoint.secretVersion)
          : null;
      await this.record(tx, ctx, 'webhooks.portal.endpoint.secret_revealed', id, {});
      return { endpoint, secret, publicKey: endpoint.publicKey };
    });
  }

  /** A stream endpoint's tokens (never the tokens themselves); read-only sessions included. */
  async listStreamTokens(ctx: CallContext, endpointId: string, page: PageRequest): Promise<Page<StreamTokenView>> {
    await this.getEndpoint(ctx, endpointId);
    return this.deps.streamTokens.list(ctx, endpointId, page);
  }

  /** A stream endpoint's open connections, in any server process; read-only sessions included. */
  async listStreamConnections(ctx: CallContext, endpointId: string): Promise<StreamConnectionView[]> {
    await this.getEndpoint(ctx, endpointId);
    return this.deps.streamConnections.list(ctx, endpointId);
  }

  /**
   * A new token of one of the tenant's stream endpoints, shown this once. Recorded as a change of the endpoint
   * (`webhooks.portal.endpoint.updated`, changes `stream_tokens`): its credentials changed, as a rotation changes them.
   */
  async createStreamToken(
    ctx: CallContext,
    endpointId: string,
    input: CreateStreamTokenInput,
  ): Promise<{ token: StreamTokenView; secret: string }> {
    requireManage(portalScope(ctx));
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getEndpoint({ ...ctx, tx }, endpointId);
      const created = await this.deps.streamTokens.create({ ...ctx, tx }, endpointId, input);
      await this.record(tx, ctx, 'webhooks.portal.endpoint.updated', endpointId, { changes: 'stream_tokens' });
      return created;
    });
  }

  /** Revokes a token of one of the tenant's stream endpoints: its streams end at once; recorded like create. */
  async revokeStreamToken(ctx: CallContext, endpointId: string, tokenId: string): Promise<void> {
    requireManage(portalScope(ctx));
    await inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getEndpoint({ ...ctx, tx }, endpointId);
      await this.deps.streamTokens.revoke({ ...ctx, tx }, endpointId, tokenId);
      await this.record(tx, ctx, 'webhooks.portal.endpoint.updated', endpointId, { changes: 'stream_tokens' });
    });
  }

  /**
   * A test message to one of the tenant's endpoints (svc.test), billed like the operator's own tests and held to the
   * session's spending cap like a replay: its price is taken from the cap before it is admitted (one conditional
   * UPDATE, so concurrent tests cannot overshoot) and given back when admission refuses it.
   */
  async sendTest(ctx: CallContext, endpointId: string): Promise<MessageView> {
    const scope = portalScope(ctx);
    requireManage(scope);
    await this.getEndpoint(ctx, endpointId);
    const price = endpointTestPriceMicros(Buffer.byteLength(PORTAL_TEST_PAYLOAD));
    await this.spend(scope, price, 'test event');
    let message: MessageView;
    try {
      message = await sendEndpointTest(this.deps, ctx, endpointId, { payload: new RawJson(PORTAL_TEST_PAYLOAD) });
    } catch (error) {
      // A refusal admitted nothing; any other failure may have committed, so the spend stays (never past the cap).
      if (isServiceError(error)) await this.spend(scope, -price, 'refund');
      throw error;
    }
    // Admission runs in its own batched transaction; the record follows its commit.
    await inTransaction(this.deps.db, ctx, (tx) =>
      this.record(tx, ctx, 'webhooks.portal.endpoint.tested', endpointId, { message_id: message.id }),
    );
    return message;
  }

  listMessages(ctx: CallContext, query: Omit<ListMessagesQuery, 'tenant_id'>): Promise<Page<MessageView>> {
    const scope = portalScope(ctx);
    return this.deps.messages.listMessages(ctx, { ...query, tenant_id: scope.tenantId });
  }

  async getMessage(ctx: CallContext, id: string): Promise<MessageView> {
    const scope = portalScope(ctx);
    const message = await this.deps.messages.getMessage(ctx, id);
    if (message.tenant_id !== scope.tenantId) throw notFound('message');
    return message;
  }

  async getMessageContent(ctx: CallContext, id: string): Promise<{ contentType: string; body: Buffer }> {
    await this.getMessage(ctx, id);
    return this.deps.messages.getContent(ctx, id);
  }

  listDeliveries(ctx: CallContext, query: Omit<ListDeliveriesQuery, 'tenant_id'>): Promise<Page<DeliveryView>> {
    const scope = portalScope(ctx);
    return this.deps.deliveries.listDeliveries(ctx, { ...query, tenant_id: scope.tenantId });
  }

  async getDelivery(ctx: CallContext, id: string): Promise<DeliveryView> {
    const scope = portalScope(ctx);
    const delivery = await this.deps.deliveries.getDelivery(ctx, id);
    if (delivery.tenant_id !== scope.tenantId) throw notFound('delivery');
    return delivery;
  }

  async listAttempts(ctx: CallContext, deliveryId: string, query: ListAttemptsQuery): Promise<Page<AttemptView>> {
    await this.getDelivery(ctx, deliveryId);
    return this.deps.deliveries.listAttempts(ctx, deliveryId, query);
  }

  /** Retry now is free (it spends one of the delivery's remaining attempts). */
  async retryNow(ctx: CallContext, id: string): Promise<DeliveryView> {
    requireManage(portalScope(ctx));
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await this.getDelivery({ ...ctx, tx }, id);
      const retried = await this.deps.deliveries.retryNow({ ...ctx, tx }, id);
      await this.record(tx, ctx, 'webhooks.portal.delivery.retried', id, {});
      return retried;
    });
  }

  /**
   * A replay of a finished delivery (frozen bytes), charged to the session's key as any replay, and only while the
   * session's spending cap allows its price: the session row is locked, so concurrent replays cannot overshoot.
   */
  async replay(ctx: CallContext, id: string): Promise<DeliveryView> {
    const scope = portalScope(ctx);
    requireManage(scope);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const inner = { ...ctx, tx };
      await this.getDelivery(inner, id);
      const [session] = (await tx.query(
        `SELECT spending_cap_micros::text AS cap, spent_micros::text AS spent FROM portal_sessions WHERE id = $1 FOR UPDATE`,
        [scope.sessionId],
      )) as { cap: string; spent: string }[];
      const quote = await this.deps.deliveries.quoteReplays(inner, [id], { configuration: 'frozen' });
      const item = quote.items[0];
      // A delivery that cannot be replayed is refused by the replay itself, with its own code, before any charge.
      const price = item?.replayable ? (parseUsd(item.total_usd) ?? 0n) : 0n;
      const spent = BigInt(session!.spent) + price;
      if (item?.replayable && spent > BigInt(session!.cap))
        throw new ServiceError(
          'spending_limit',
          `this replay costs ${formatUsd(price)} USD and the portal session has ${formatUsd(
            BigInt(session!.cap) - BigInt(session!.spent),
          )} USD left of its cap`,
        );
      const replayed = await this.deps.deliveries.replay(inner, id, { configuration: 'frozen' });
      await tx.query(`UPDATE portal_sessions SET spent_micros = $2 WHERE id = $1`, [scope.sessionId, spent.toString()]);
      await this.record(tx, ctx, 'webhooks.portal.delivery.replayed', id, {
        replay_delivery_id: replayed.id,
        charged_usd: formatUsd(price),
      });
      return replayed;
    });
  }

  /**
   * Moves the session's spend by `micros` when it stays within its cap (a refund always does), in one statement:
   * 402 spending_limit otherwise, with what is left.
   */
  private async spend(scope: PortalScope, micros: bigint, what: string): Promise<void> {
    const [rows] = (await this.deps.db.query(
      `UPDATE portal_sessions SET spent_micros = greatest(0, spent_micros + $2::bigint)
        WHERE id = $1 AND ($2::bigint <= 0 OR spent_micros + $2::bigint <= spending_cap_micros)
        RETURNING id`,
      [scope.sessionId, micros.toString()],
    )) as [{ id: string }[], number];
    if (rows.length > 0) return;
    const [session] = (await this.deps.db.query(
      `SELECT spending_cap_micros::text AS cap, spent_micros::text AS spent FROM portal_sessions WHERE id = $1`,
      [scope.sessionId],
    )) as { cap: string; spent: string }[];
    throw new ServiceError(
      'spending_limit',
      `this ${what} costs ${formatUsd(micros)} USD and the portal session has ${formatUsd(
        BigInt(session?.cap ?? '0') - BigInt(session?.spent ?? '0'),
      )} USD left of its cap`,
    );
  }

  /** Patterns a restricted session may use: exact names of its event types (a wildcard could reach others). */
  private checkEvents(scope: PortalScope, events: readonly string[]): void {
    if (scope.eventTypes === null) return;
    const allowed = new Set(scope.eventTypes);
    const outside = events.find((pattern) => !allowed.has(pattern));
    if (outside !== undefined)
      throw new ServiceError('invalid_field', `event type ${outside} is not offered in this portal`, {
        field: 'events',
      });
  }

  private async record(
    tx: EntityManager,
    ctx: CallContext,
    type: PortalEventType,
    resourceId: string,
    extra: Record<string, string | null>,
  ): Promise<void> {
    const scope = portalScope(ctx);
    const resourceKey = type.startsWith('webhooks.portal.delivery.') ? 'delivery_id' : 'endpoint_id';
    await this.deps.events.emit(tx, [
      {
        type,
        teamId: ctx.actor.teamId,
        tenantId: scope.tenantId,
        resourceId,
        data: { session_id: scope.sessionId, [resourceKey]: resourceId, ...extra },
      },
    ]);
  }
}
