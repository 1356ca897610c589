import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { checkReceiverUrl, type UrlPolicy } from '@svc/egress';
import type { Clock } from '../common/clock.js';
import { addMs, SECOND } from '../common/clock.js';
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
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import { setOrdering } from '../deliveries/ordering.js';
import { compileRules } from './endpoint-rules.js';
import { EndpointCredentialsService } from './endpoint-credentials.service.js';
import { newSigningCredential } from './endpoint-secrets.js';
import { EndpointEntity, type EndpointOrdering } from './endpoint.entity.js';
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

export interface EndpointServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  sealer: Sealer;
  urlPolicy: UrlPolicy;
  tenants: TenantService;
}

/** The columns a change may set; version and updated_at follow from any of them. */
type EndpointChange = Partial<Omit<EndpointEntity, 'id' | 'teamId' | 'tenantId' | 'version' | 'createdAt'>>;

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
    const check = checkReceiverUrl(url, this.deps.urlPolicy);
    if (!check.ok) throw new ServiceError(check.code, check.message, { field: 'url' });
    return { host: check.host };
  }

  async createEndpoint(ctx: CallContext, input: CreateEndpointInput): Promise<EndpointWithSecret> {
    const { host } = this.checkUrl(input.url);
    compileRules(input.filter, input.transform);
    this.checkConcurrency(input.max_concurrency);
    checkOrderedConcurrency(input.ordering, input.max_concurrency);
    const cap = this.deps.limits.max_endpoint_concurrency.value;
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      await this.deps.tenants.requireActiveTenant({ ...ctx, tx }, input.tenant_id);
      await this.checkQuotas(tx, ctx.actor.teamId, input.tenant_id);
      const now = this.deps.clock.now();
      const id = newId('endpoint', this.deps.clock);
      const credential = newSigningCredential(input.signature_scheme);
      const endpoint = tx.getRepository(EndpointEntity).create({
        id,
        teamId: ctx.actor.teamId,
        tenantId: input.tenant_id,
        url: input.url,
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

  private checkConcurrency(maxConcurrency: number | undefined): void {
    const cap = this.deps.limits.max_endpoint_concurrency.value;
    if (maxConcurrency !== undefined && maxConcurrency > cap)
      throw new ServiceError('invalid_field', `max_concurrency is at most ${cap}`, { field: 'max_concurrency' });
  }

  private async checkQuotas(tx: EntityManager, teamId: string, tenantId: string): Promise<void> {
    const rows: { tenant_count: string; team_count: string }[] = await tx.query(
      `SELECT count(*) FILTER (WHERE tenant_id = $2) AS tenant_count, count(*) AS team_count
         FROM endpoints WHERE team_id = $1 AND deleted_at IS NULL`,
      [teamId, tenantId],
    );
    const counts = rows[0]!;
    if (Number(counts.tenant_count) >= this.deps.limits.max_endpoints_per_tenant.value)
      throw new ServiceError(
        'quota_exceeded',
        `the tenant has reached its limit of ${this.deps.limits.max_endpoints_per_tenant.value} endpoints`,
      );
    if (Number(counts.team_count) >= this.deps.limits.max_endpoints.value)
      throw new ServiceError(
        'quota_exceeded',
        `the team has reached its limit of ${this.deps.limits.max_endpoints.value} endpoints`,
      );
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
    const qb = this.ownedQuery(reader(this.deps.db, ctx), ctx, id);
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
    this.checkConcurrency(input.max_concurrency);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await this.lockWithState(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const change: EndpointChange = {};
      const set = <K extends keyof EndpointChange>(key: K, value: EndpointEntity[K] | undefined) => {
        if (value !== undefined && JSON.stringify(value) !== JSON.stringify(endpoint[key])) change[key] = value;
      };
      if (input.url !== undefined && input.url !== endpoint.url)
        Object.assign(change, this.urlChange(endpoint, input.url, input));
      if (input.status !== undefined && input.status !== endpoint.status) {
        if (endpoint.status === 'disabled')
          throw new ServiceError(
            'invalid_state',
            'the service disabled this endpoint; use POST /endpoints/{id}/resume',
          );
        change.status = input.status;
      }
      set('name', input.name);
      set('description', input.description);
      set('events', input.events);
      if (input.filter !== undefined) set('filter', input.filter?.text ?? null);
      if (input.transform !== undefined && (input.transform?.text ?? null) !== endpoint.transform) {
        change.transform = input.transform?.text ?? null;
        change.transformVersion = (BigInt(endpoint.transformVersion) + 1n).toString();
      }
      set('ratePerSecond', input.rate_per_second);
      set('maxConcurrency', input.max_concurrency);
      const ordering = input.ordering ?? endpoint.ordering;
      checkOrderedConcurrency(ordering, input.max_concurrency);
      set('ordering', input.ordering);
      set('orderingOnFailure', input.ordering_on_failure);
      // An ordered endpoint sends one delivery at a time (docs/delivery.md, "Ordered endpoints").
      if (ordering === 'ordered') set('maxConcurrency', 1);
      set('retryDelaysSeconds', input.retry_delays_seconds);
      set('timeoutSeconds', input.timeout_seconds);
      set('metadata', input.metadata);
      if (input.headers !== undefined && !this.credentials.sameHeaders(endpoint, input.headers))
        Object.assign(change, this.credentials.sealHeaders(id, input.headers));
      if (input.authorization !== undefined && !this.credentials.sameAuthorization(endpoint, input.authorization))
        change.authorizationSealed = this.credentials.sealAuthorization(id, input.authorization);
      if (Object.keys(change).length === 0) return this.view(endpoint, state);
      if (change.ordering !== undefined)
        await setOrdering(tx, id, change.ordering === 'ordered', this.deps.clock.now());
      // Health is the engine's row: touched only when the URL changes (a new URL starts healthy).
      const health = change.url !== undefined ? await resetEndpointHealth(tx, id) : state.health;
      return this.view(await this.applyChange(tx, endpoint, change), { ...state, health });
    });
  }

  /**
   * A URL with a new host must come with authorization (or null) and headers (or {}), so credentials meant for
   * one host never go to another. Any new URL moves url_revision (and resets health, in endpoint_health).
   */
  private urlChange(endpoint: EndpointEntity, url: string, input: UpdateEndpointInput): EndpointChange {
    const { host } = this.checkUrl(url);
    if (host !== endpoint.urlHost) {
      if (input.authorization === undefined)
        throw new ServiceError(
          'invalid_field',
          'a URL with a new host needs authorization (or null) in the same request',
          { field: 'authorization' },
        );
      if (input.headers === undefined)
        throw new ServiceError('invalid_field', 'a URL with a new host needs headers (or {}) in the same request', {
          field: 'headers',
        });
    }
    return {
      url,
      urlHost: host,
      urlRevision: (BigInt(endpoint.urlRevision) + 1n).toString(),
    };
  }

  async deleteEndpoint(ctx: CallContext, id: string, ifMatch: string): Promise<void> {
    await inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const now = this.deps.clock.now();
      await this.applyChange(tx, endpoint, { deletedAt: now });
      await cancelWaitingDeliveries(tx, { endpointIds: [endpoint.id] }, 'endpoint_deleted', now);
    });
  }

  async rotateSecret(
    ctx: CallContext,
    id: string,
    ifMatch: string,
    input: RotateSecretInput,
  ): Promise<EndpointWithSecret> {
    const { overlap_seconds: overlapSeconds } = input;
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await this.lockWithState(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const now = this.deps.clock.now();
      if (overlapSeconds !== 0 && endpoint.oldSecretExpiresAt && endpoint.oldSecretExpiresAt > now)
        throw new ServiceError(
          'invalid_state',
          'a previous secret is still in its overlap; rotate with overlap_seconds 0 to retire it',
        );
      const version = endpoint.secretVersion + 1;
      const overlapEnd = addMs(now, overlapSeconds * SECOND);
      const scheme = input.signature_scheme ?? endpoint.signatureScheme;
      const credential = newSigningCredential(scheme);
      const { secrets } = this.credentials;
      await secrets.addCurrent(tx, id, version, credential.sealed, ctx.actor.keyId, now);
      await secrets.retireOlder(tx, id, version, overlapSeconds === 0 ? now : overlapEnd);
      const rotated = await this.applyChange(tx, endpoint, {
        secretVersion: version,
        oldSecretExpiresAt: overlapSeconds === 0 ? null : overlapEnd,
        signatureScheme: scheme,
        publicKey: credential.publicKey,
        // The key that keeps signing through the overlap stays readable with it (null when it was hmac).
        oldPublicKey: overlapSeconds === 0 ? null : endpoint.publicKey,
      });
      return { endpoint: this.view(rotated, state), signingSecret: credential.shown };
    });
  }

  /**
   * Re-checks the URL and sends one probe: enabled (disabled_reason cleared) with the circuit half open and a probe
   * due now in endpoint_health; the engine sends that probe. The body is `{}`.
   */
  async resumeEndpoint(ctx: CallContext, id: string, ifMatch: string, _input: EmptyInput): Promise<EndpointView> {
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const { endpoint, state } = await this.lockWithState(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const resumable =
        endpoint.status === 'disabled' || (endpoint.status === 'enabled' && state.health.circuit !== 'closed');
      if (!resumable)
        throw new ServiceError(
          'invalid_state',
          'only a disabled endpoint or one with an open circuit can be resumed; use PATCH status for paused ones',
        );
      this.checkUrl(endpoint.url);
      const resumed = await this.applyChange(tx, endpoint, { status: 'enabled', disabledReason: null });
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

  /** The team's endpoint `id` (not deleted), as a query of alias `e`. */
  private ownedQuery(manager: EntityManager, ctx: CallContext, id: string): SelectQueryBuilder<EndpointEntity> {
    return manager
      .getRepository(EndpointEntity)
      .createQueryBuilder('e')
      .where('e.id = :id AND e.team_id = :teamId AND e.deleted_at IS NULL', { id, teamId: ctx.actor.teamId });
  }

  /**
   * Locks the configuration row for a change (FOR NO KEY UPDATE, like lockOwned) and reads its health and queued
   * count in the same query without locking them: the engine keeps writing those while an endpoint is edited.
   */
  private async lockWithState(
    tx: EntityManager,
    ctx: CallContext,
    id: string,
  ): Promise<{ endpoint: EndpointEntity; state: EndpointState }> {
    const qb = this.ownedQuery(tx, ctx, id).setLock('for_no_key_update', undefined, ['e']);
    const [found] = await endpointsWithState(joinEndpointState(qb));
    if (!found) throw notFound('endpoint');
    return found;
  }

  /**
   * Writes a change to a row locked by this transaction with one UPDATE (save() would read the row again first),
   * moves the version and wakes the endpoint's owner at commit.
   */
  private async applyChange(
    tx: EntityManager,
    endpoint: EndpointEntity,
    change: EndpointChange,
  ): Promise<EndpointEntity> {
    const update = {
      ...change,
      version: (BigInt(endpoint.version) + 1n).toString(),
      updatedAt: this.deps.clock.now(),
    };
    await tx.getRepository(EndpointEntity).update({ id: endpoint.id }, update);
    if (change.urlRevision !== undefined) await recordUrlRevision(tx, { ...endpoint, ...update }, update.updatedAt);
    // The endpoint's owner reads its configuration again at once (enable, resume: waiting deliveries go now).
    wakeEndpoints(tx, [endpoint.id], { reread: true });
    return Object.assign(endpoint, update);
  }
}

/** 422 invalid_field (max_concurrency): an ordered endpoint has one delivery in flight at a time. */
function checkOrderedConcurrency(ordering: EndpointOrdering, maxConcurrency: number | undefined): void {
  if (ordering === 'ordered' && maxConcurrency !== undefined && maxConcurrency !== 1)
    throw new ServiceError(
      'invalid_field',
      'an ordered endpoint sends one delivery at a time: max_concurrency must be 1 (or left out)',
      { field: 'max_concurrency' },
    );
}
