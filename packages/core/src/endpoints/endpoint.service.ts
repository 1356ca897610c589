import type { DataSource, EntityManager } from 'typeorm';
import type { UrlPolicy } from '@svc/egress';
import type { Clock } from '../common/clock.js';
import type { CallContext } from '../common/context.js';
import { assertCurrent, etagFor } from '../common/etag.js';
import { ServiceError, notFound } from '../common/errors.js';
import { newId } from '../common/ids.js';
import { decodeCursor, parseLimit, toPage, type ListScope, type Page } from '../common/paging.js';
import type { Sealer } from '../common/sealing.js';
import { inTransaction, lockOwned, lockTeam, reader } from '../common/transaction.js';
import type { Limits } from '../catalog/limits.js';
import type { TenantService } from '../tenants/tenant.service.js';
import { cancelWaitingDeliveries } from '../deliveries/delivery-records.js';
import { setOrdering } from '../deliveries/ordering.js';
import { compileRules } from './endpoint-rules.js';
import {
  checkConcurrency,
  checkDeliveryTarget,
  checkEndpointQuotas,
  checkEndpointUrl,
  checkOrderedConcurrency,
} from './endpoint-checks.js';
import { rotateSigningSecret } from './endpoint-rotation.js';
import { applyEndpointChange, endpointChange, lockEndpointWithState, ownedEndpointQuery } from './endpoint-writes.js';
import { EndpointCredentialsService } from './endpoint-credentials.service.js';
import { newSigningCredential } from './endpoint-secrets.js';
import { EndpointEntity } from './endpoint.entity.js';
import {
  endpointsWithState,
  insertEndpointState,
  joinEndpointState,
  resetEndpointHealth,
  scheduleProbe,
  type EndpointState,
} from './endpoint-state.js';
import type {
  CreateEndpointInput,
  EmptyInput,
  ListEndpointsQuery,
  RotateSecretInput,
  UpdateEndpointInput,
} from './endpoint.inputs.js';
import { toEndpointView, type EndpointView, type EndpointWithSecret } from './endpoint.view.js';
import { recordUrlRevision } from './url-revisions.js';
import { notifyStreamsEnded } from '../streams/stream-signals.js';

export interface EndpointServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  sealer: Sealer;
  urlPolicy: UrlPolicy;
  tenants: TenantService;
}

/**
 * Endpoints: create, read, list, change, delete, rotate the signing secret and resume. Inputs arrive parsed by the
 * transport with the shared schemas (endpoint.inputs.ts). Sealed values and signing secrets live in `credentials`.
 */
export class EndpointService {
  readonly credentials: EndpointCredentialsService;

  constructor(private readonly deps: EndpointServiceDeps) {
    this.credentials = new EndpointCredentialsService(deps.sealer, deps.clock);
  }

  etag(endpoint: { id: string; version: string }): string {
    return etagFor(endpoint.id, endpoint.version);
  }

  view(endpoint: EndpointEntity, state: EndpointState): EndpointView {
    return toEndpointView(endpoint, state, this.deps.clock.now(), this.etag(endpoint));
  }

  /** 422 unsafe_url / invalid_field (field url) unless the URL is an acceptable receiver. */
  checkUrl(url: string): { host: string } {
    return checkEndpointUrl(url, this.deps.urlPolicy);
  }

  async createEndpoint(ctx: CallContext, input: CreateEndpointInput): Promise<EndpointWithSecret> {
    const { url, host } = checkDeliveryTarget(input, this.deps.urlPolicy);
    compileRules(input.filter, input.transform);
    checkConcurrency(this.deps.limits, input.max_concurrency);
    checkOrderedConcurrency(input.ordering, input.max_concurrency);
    const cap = this.deps.limits.max_endpoint_concurrency.value;
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      await this.deps.tenants.requireActiveTenant({ ...ctx, tx }, input.tenant_id);
      await checkEndpointQuotas(tx, this.deps.limits, ctx.actor.teamId, input.tenant_id);
      const now = this.deps.clock.now();
      const id = newId('endpoint', this.deps.clock);
      const credential = newSigningCredential(input.signature_scheme);
      const endpoint = tx.getRepository(EndpointEntity).create({
        id,
        teamId: ctx.actor.teamId,
        tenantId: input.tenant_id,
        deliveryMode: input.delivery_mode,
        url,
        urlHost: host,
        urlRevision: '1',
        name: input.name,
        description: input.description,
        events: input.events,
        filter: input.filter?.text ?? null,
        transform: input.transform?.text ?? null,
        transformVersion: '1',
        status: input.status,
        disabledReason: null,
        ratePerSecond: input.rate_per_second,
        maxConcurrency: input.ordering === 'ordered' ? 1 : (input.max_concurrency ?? Math.min(3, cap)),
        ordering: input.ordering,
        orderingOnFailure: input.ordering_on_failure,
        retryDelaysSeconds: input.retry_delays_seconds,
        timeoutSeconds: input.timeout_seconds,
        ...this.credentials.sealHeaders(id, input.headers),
        authorizationSealed: this.credentials.sealAuthorization(id, input.authorization),
        metadata: input.metadata,
        secretVersion: 1,
        oldSecretExpiresAt: null,
        signatureScheme: input.signature_scheme,
        publicKey: credential.publicKey,
        oldPublicKey: null,
        version: '1',
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
      await tx.getRepository(EndpointEntity).insert(endpoint);
      await recordUrlRevision(tx, endpoint, now);
      if (input.ordering === 'ordered') await setOrdering(tx, id, true, this.deps.clock.now());
      const state = await insertEndpointState(tx, id);
      await this.credentials.secrets.addCurrent(tx, id, 1, credential.sealed, ctx.actor.keyId, now);
      return { endpoint: this.view(endpoint, state), signingSecret: credential.shown };
    });
  }

  async getEndpointEntity(ctx: CallContext, id: string): Promise<EndpointEntity> {
    const endpoint = await reader(this.deps.db, ctx)
      .getRepository(EndpointEntity)
      .findOneBy({ id, teamId: ctx.actor.teamId });
    if (!endpoint || endpoint.deletedAt) throw notFound('endpoint');
    return endpoint;
  }

  /** One query: the configuration row with its health and queued count. */
  async getEndpoint(ctx: CallContext, id: string): Promise<EndpointView> {
    const qb = ownedEndpointQuery(reader(this.deps.db, ctx), ctx.actor.teamId, id);
    const [found] = await endpointsWithState(joinEndpointState(qb));
    if (!found) throw notFound('endpoint');
    return this.view(found.endpoint, found.state);
  }

  async listEndpoints(ctx: CallContext, query: ListEndpointsQuery): Promise<Page<EndpointView>> {
    const limit = parseLimit(query.limit);
    const scope: ListScope = {
      teamId: ctx.actor.teamId,
      list: 'endpoints',
      filters: { tenant_id: query.tenant_id ?? null, status: query.status ?? null },
    };
    const after = decodeCursor(scope, query.cursor);
    const qb = reader(this.deps.db, ctx)
      .getRepository(EndpointEntity)
      .createQueryBuilder('e')
      .where('e.team_id = :teamId AND e.deleted_at IS NULL', { teamId: ctx.actor.teamId })
      .orderBy('e.id', 'ASC')
      .limit(limit + 1);
    joinEndpointState(qb);
    if (query.tenant_id !== undefined) qb.andWhere('e.tenant_id = :tenantId', { tenantId: query.tenant_id });
    if (query.status !== undefined) qb.andWhere('e.status = :status', { status: query.status });
    if (after) qb.andWhere('e.id > :after', { after });
    return toPage(scope, await endpointsWithState(qb), limit, (row) => this.view(row.endpoint, row.state));
  }

  /** Only what differs is written; an unchanged request keeps the version. */
  async updateEndpoint(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: UpdateEndpointInput,
  ): Promise<EndpointView> {
    if (input.status === 'disabled')
      throw new ServiceError('invalid_field', 'status can be set to enabled or paused; only the service disables', {
        field: 'status',
      });
    compileRules(input.filter ?? null, input.transform ?? null);
    checkConcurrency(this.deps.limits, input.max_concurrency);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await lockEndpointWithState(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const change = endpointChange(endpoint, input, this.credentials, this.deps.urlPolicy);
      if (Object.keys(change).length === 0) return this.view(endpoint, state);
      if (change.ordering !== undefined)
        await setOrdering(tx, id, change.ordering === 'ordered', this.deps.clock.now());
      // Health is the engine's row: touched only when the URL changes (a new URL starts healthy).
      const health = change.url !== undefined ? await resetEndpointHealth(tx, id) : state.health;
      return this.view(await applyEndpointChange(tx, this.deps.clock, endpoint, change), { ...state, health });
    });
  }

  async deleteEndpoint(ctx: CallContext, id: string, ifMatch: string): Promise<void> {
    await inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const now = this.deps.clock.now();
      await applyEndpointChange(tx, this.deps.clock, endpoint, { deletedAt: now });
      await cancelWaitingDeliveries(tx, { endpointIds: [endpoint.id] }, 'endpoint_deleted', now);
      // Its open streams end at once, in whichever server process holds them.
      if (endpoint.deliveryMode === 'stream') await notifyStreamsEnded(tx, { endpointIds: [endpoint.id] });
    });
  }

  async rotateSecret(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: RotateSecretInput,
  ): Promise<EndpointWithSecret> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await lockEndpointWithState(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const { rotated, shown } = await rotateSigningSecret(
        tx,
        this.credentials,
        endpoint,
        input,
        ctx.actor.keyId,
        this.deps.clock,
      );
      return { endpoint: this.view(rotated, state), signingSecret: shown };
    });
  }

  /**
   * Re-checks the URL and sends one probe: enabled (disabled_reason cleared) with the circuit half open and a probe
   * due now in endpoint_health; the engine sends that probe. The body is `{}`.
   */
  async resumeEndpoint(ctx: CallContext, id: string, ifMatch: string, _input: EmptyInput): Promise<EndpointView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await lockEndpointWithState(tx, ctx.actor.teamId, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const resumable =
        endpoint.status === 'disabled' || (endpoint.status === 'enabled' && state.health.circuit !== 'closed');
      if (!resumable)
        throw new ServiceError(
          'invalid_state',
          'only a disabled endpoint or one with an open circuit can be resumed; use PATCH status for paused ones',
        );
      if (endpoint.deliveryMode === 'push') this.checkUrl(endpoint.url);
      const resumed = await applyEndpointChange(tx, this.deps.clock, endpoint, {
        status: 'enabled',
        disabledReason: null,
      });
      const health = await scheduleProbe(tx, id, this.deps.clock.now());
      return this.view(resumed, { ...state, health });
    });
  }

  /**
   * The endpoint's signing secret when `version` is still the current one and the caller's key made it
   * (an idempotent replay of create or rotate_secret shows the secret only then); null otherwise.
   */
  async currentSecretMadeBy(ctx: CallContext, endpointId: string, version: number): Promise<string | null> {
    const endpoint = await reader(this.deps.db, ctx)
      .getRepository(EndpointEntity)
      .findOneBy({ id: endpointId, teamId: ctx.actor.teamId });
    if (!endpoint || endpoint.deletedAt || endpoint.secretVersion !== version) return null;
    return this.credentials.secrets.currentFor(reader(this.deps.db, ctx), endpointId, version, ctx.actor.keyId);
  }

  private lock(tx: EntityManager, ctx: CallContext, id: string): Promise<EndpointEntity> {
    return lockOwned(tx, EndpointEntity, ctx.actor.teamId, id, 'endpoint', { softDeleted: true });
  }
}
