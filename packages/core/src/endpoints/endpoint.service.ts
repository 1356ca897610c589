import type { DataSource, EntityManager } from 'typeorm';
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
import { parseInput } from '../common/validation.js';
import type { Limits } from '../catalog/limits.js';
import type { TenantService } from '../tenants/tenant.service.js';
import { compileRules } from './endpoint-rules.js';
import { EndpointSecrets, generateSigningSecret } from './endpoint-secrets.js';
import { EndpointEntity } from './endpoint.entity.js';
import {
  CreateEndpointInput,
  EmptyInput,
  ListEndpointsQuery,
  RotateSecretInput,
  UpdateEndpointInput,
} from './endpoint.inputs.js';
import { toEndpointView, type EndpointView, type EndpointWithSecret } from './endpoint.view.js';

const headersContext = (id: string) => `endpoint:${id}:headers`;
const authorizationContext = (id: string) => `endpoint:${id}:authorization`;

export interface EndpointServiceDeps {
  db: DataSource;
  clock: Clock;
  limits: Limits;
  sealer: Sealer;
  urlPolicy: UrlPolicy;
  tenants: TenantService;
}

/** The outbound credentials of an endpoint, opened for the delivery engine. Never rendered. */
export interface EndpointCredentials {
  headers: Record<string, string>;
  authorization: string | null;
  signingSecrets: string[];
}

export class EndpointService {
  readonly secrets: EndpointSecrets;

  constructor(private readonly deps: EndpointServiceDeps) {
    this.secrets = new EndpointSecrets(deps.sealer);
  }

  etag(endpoint: EndpointEntity): string {
    return etagFor(endpoint.id, endpoint.version);
  }

  view(endpoint: EndpointEntity): EndpointView {
    return toEndpointView(endpoint, this.deps.clock.now(), 0, this.etag(endpoint));
  }

  /** 422 unsafe_url / invalid_field (field url) unless the URL is an acceptable receiver. */
  checkUrl(url: string): { host: string } {
    const check = checkReceiverUrl(url, this.deps.urlPolicy);
    if (!check.ok) throw new ServiceError(check.code, check.message, { field: 'url' });
    return { host: check.host };
  }

  async createEndpoint(ctx: CallContext, raw: unknown): Promise<EndpointWithSecret> {
    const input = parseInput(CreateEndpointInput, raw);
    const { host } = this.checkUrl(input.url);
    compileRules(input.filter, input.transform);
    const cap = this.deps.limits.max_endpoint_concurrency.value;
    if (input.max_concurrency !== undefined && input.max_concurrency > cap)
      throw new ServiceError('invalid_field', `max_concurrency is at most ${cap}`, { field: 'max_concurrency' });
    return inTransaction(this.deps.db, ctx, async (tx) => {
      await lockTeam(tx, ctx.actor.teamId);
      await this.deps.tenants.requireActiveTenant({ ...ctx, tx }, input.tenant_id);
      await this.checkQuotas(tx, ctx.actor.teamId, input.tenant_id);
      const now = this.deps.clock.now();
      const id = newId('endpoint', this.deps.clock);
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
        maxConcurrency: input.max_concurrency ?? Math.min(3, cap),
        retryDelaysSeconds: input.retry_delays_seconds,
        timeoutSeconds: input.timeout_seconds,
        ...this.sealHeaders(id, input.headers),
        authorizationSealed: this.sealAuthorization(id, input.authorization),
        metadata: input.metadata,
        secretVersion: 1,
        oldSecretExpiresAt: null,
        circuit: 'closed',
        consecutiveFailures: 0,
        lastSuccessAt: null,
        lastFailureAt: null,
        nextProbeAt: null,
        version: '1',
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      });
      await tx.getRepository(EndpointEntity).insert(endpoint);
      const signingSecret = generateSigningSecret();
      await this.secrets.addCurrent(tx, id, 1, signingSecret, ctx.actor.keyId, now);
      return { endpoint: this.view(endpoint), signingSecret };
    });
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

  private sealHeaders(
    id: string,
    headers: Record<string, string>,
  ): Pick<EndpointEntity, 'headerNames' | 'headersSealed'> {
    const names = Object.keys(headers).map((name) => name.toLowerCase());
    return {
      headerNames: names,
      headersSealed: names.length === 0 ? null : this.deps.sealer.seal(JSON.stringify(headers), headersContext(id)),
    };
  }

  private sealAuthorization(id: string, authorization: string | null): Buffer | null {
    return authorization === null ? null : this.deps.sealer.seal(authorization, authorizationContext(id));
  }

  async getEndpointEntity(ctx: CallContext, id: string): Promise<EndpointEntity> {
    const endpoint = await reader(this.deps.db, ctx)
      .getRepository(EndpointEntity)
      .findOneBy({ id, teamId: ctx.actor.teamId });
    if (!endpoint || endpoint.deletedAt) throw notFound('endpoint');
    return endpoint;
  }

  async getEndpoint(ctx: CallContext, id: string): Promise<EndpointView> {
    return this.view(await this.getEndpointEntity(ctx, id));
  }

  async listEndpoints(ctx: CallContext, raw: unknown): Promise<Page<EndpointView>> {
    const query = parseInput(ListEndpointsQuery, raw);
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
    if (query.tenant_id !== undefined) qb.andWhere('e.tenant_id = :tenantId', { tenantId: query.tenant_id });
    if (query.status !== undefined) qb.andWhere('e.status = :status', { status: query.status });
    if (after) qb.andWhere('e.id > :after', { after });
    return toPage(scope, await qb.getMany(), limit, (row) => this.view(row));
  }

  async updateEndpoint(ctx: CallContext, id: string, ifMatch: string, raw: unknown): Promise<EndpointView> {
    const input = parseInput(UpdateEndpointInput, raw);
    if (input.status === 'disabled')
      throw new ServiceError('invalid_field', 'status can be set to enabled or paused; only the service disables', {
        field: 'status',
      });
    compileRules(input.filter ?? null, input.transform ?? null);
    const cap = this.deps.limits.max_endpoint_concurrency.value;
    if (input.max_concurrency !== undefined && input.max_concurrency > cap)
      throw new ServiceError('invalid_field', `max_concurrency is at most ${cap}`, { field: 'max_concurrency' });
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const before = JSON.stringify(endpoint);
      if (input.url !== undefined && input.url !== endpoint.url) this.changeUrl(endpoint, input.url, raw);
      if (input.status !== undefined && input.status !== endpoint.status) {
        if (endpoint.status === 'disabled')
          throw new ServiceError(
            'invalid_state',
            'the service disabled this endpoint; use POST /endpoints/{id}/resume',
          );
        endpoint.status = input.status;
      }
      if (input.name !== undefined) endpoint.name = input.name;
      if (input.description !== undefined) endpoint.description = input.description;
      if (input.events !== undefined) endpoint.events = input.events;
      if (input.filter !== undefined) endpoint.filter = input.filter?.text ?? null;
      if (input.transform !== undefined && (input.transform?.text ?? null) !== endpoint.transform) {
        endpoint.transform = input.transform?.text ?? null;
        endpoint.transformVersion = (BigInt(endpoint.transformVersion) + 1n).toString();
      }
      if (input.rate_per_second !== undefined) endpoint.ratePerSecond = input.rate_per_second;
      if (input.max_concurrency !== undefined) endpoint.maxConcurrency = input.max_concurrency;
      if (input.retry_delays_seconds !== undefined) endpoint.retryDelaysSeconds = input.retry_delays_seconds;
      if (input.timeout_seconds !== undefined) endpoint.timeoutSeconds = input.timeout_seconds;
      if (input.metadata !== undefined) endpoint.metadata = input.metadata;
      if (input.headers !== undefined && !this.sameHeaders(endpoint, input.headers))
        Object.assign(endpoint, this.sealHeaders(id, input.headers));
      if (input.authorization !== undefined && !this.sameAuthorization(endpoint, input.authorization))
        endpoint.authorizationSealed = this.sealAuthorization(id, input.authorization);
      if (JSON.stringify(endpoint) === before) return this.view(endpoint);
      return this.view(await this.saveChange(tx, endpoint));
    });
  }

  /**
   * A URL with a new host must come with authorization (or null) and headers (or {}), so credentials meant for
   * one host never go to another. Any new URL resets health and moves url_revision.
   */
  private changeUrl(endpoint: EndpointEntity, url: string, raw: unknown): void {
    const given = (field: string) => typeof raw === 'object' && raw !== null && Object.hasOwn(raw, field);
    const { host } = this.checkUrl(url);
    if (host !== endpoint.urlHost) {
      if (!given('authorization'))
        throw new ServiceError(
          'invalid_field',
          'a URL with a new host needs authorization (or null) in the same request',
          { field: 'authorization' },
        );
      if (!given('headers'))
        throw new ServiceError('invalid_field', 'a URL with a new host needs headers (or {}) in the same request', {
          field: 'headers',
        });
    }
    endpoint.url = url;
    endpoint.urlHost = host;
    endpoint.urlRevision = (BigInt(endpoint.urlRevision) + 1n).toString();
    Object.assign(endpoint, {
      circuit: 'closed',
      consecutiveFailures: 0,
      lastSuccessAt: null,
      lastFailureAt: null,
      nextProbeAt: null,
    });
  }

  private sameHeaders(endpoint: EndpointEntity, headers: Record<string, string>): boolean {
    const current = endpoint.headersSealed
      ? (JSON.parse(this.deps.sealer.open(endpoint.headersSealed, headersContext(endpoint.id))) as Record<
          string,
          string
        >)
      : {};
    return JSON.stringify(current) === JSON.stringify(headers);
  }

  private sameAuthorization(endpoint: EndpointEntity, authorization: string | null): boolean {
    const current = endpoint.authorizationSealed
      ? this.deps.sealer.open(endpoint.authorizationSealed, authorizationContext(endpoint.id))
      : null;
    return current === authorization;
  }

  async deleteEndpoint(ctx: CallContext, id: string, ifMatch: string): Promise<void> {
    await inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      endpoint.deletedAt = this.deps.clock.now();
      await this.saveChange(tx, endpoint);
    });
  }

  async rotateSecret(ctx: CallContext, id: string, ifMatch: string, raw: unknown): Promise<EndpointWithSecret> {
    const { overlap_seconds: overlapSeconds } = parseInput(RotateSecretInput, raw);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const now = this.deps.clock.now();
      if (overlapSeconds !== 0 && endpoint.oldSecretExpiresAt && endpoint.oldSecretExpiresAt > now)
        throw new ServiceError(
          'invalid_state',
          'a previous secret is still in its overlap; rotate with overlap_seconds 0 to retire it',
        );
      const version = endpoint.secretVersion + 1;
      const overlapEnd = addMs(now, overlapSeconds * SECOND);
      const signingSecret = generateSigningSecret();
      await this.secrets.addCurrent(tx, id, version, signingSecret, ctx.actor.keyId, now);
      await this.secrets.retireOlder(tx, id, version, overlapSeconds === 0 ? now : overlapEnd);
      endpoint.secretVersion = version;
      endpoint.oldSecretExpiresAt = overlapSeconds === 0 ? null : overlapEnd;
      return { endpoint: this.view(await this.saveChange(tx, endpoint)), signingSecret };
    });
  }

  /** Re-checks the URL and sends one probe: enabled with the circuit half open. */
  async resumeEndpoint(ctx: CallContext, id: string, ifMatch: string, raw: unknown): Promise<EndpointView> {
    parseInput(EmptyInput, raw);
    return inTransaction(this.deps.db, ctx, async (tx) => {
      const endpoint = await this.lock(tx, ctx, id);
      assertCurrent(ifMatch, this.etag(endpoint));
      const resumable =
        endpoint.status === 'disabled' || (endpoint.status === 'enabled' && endpoint.circuit !== 'closed');
      if (!resumable)
        throw new ServiceError(
          'invalid_state',
          'only a disabled endpoint or one with an open circuit can be resumed; use PATCH status for paused ones',
        );
      this.checkUrl(endpoint.url);
      Object.assign(endpoint, {
        status: 'enabled',
        disabledReason: null,
        circuit: 'half_open',
        nextProbeAt: this.deps.clock.now(),
      });
      return this.view(await this.saveChange(tx, endpoint));
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
    return this.secrets.currentFor(reader(this.deps.db, ctx), endpointId, version, ctx.actor.keyId);
  }

  /** For the delivery engine: the values to send, opened from their sealed form. */
  async credentials(tx: EntityManager, endpoint: EndpointEntity): Promise<EndpointCredentials> {
    return {
      headers: endpoint.headersSealed
        ? (JSON.parse(this.deps.sealer.open(endpoint.headersSealed, headersContext(endpoint.id))) as Record<
            string,
            string
          >)
        : {},
      authorization: endpoint.authorizationSealed
        ? this.deps.sealer.open(endpoint.authorizationSealed, authorizationContext(endpoint.id))
        : null,
      signingSecrets: await this.secrets.signingSecrets(tx, endpoint.id, this.deps.clock.now()),
    };
  }

  private lock(tx: EntityManager, ctx: CallContext, id: string): Promise<EndpointEntity> {
    return lockOwned(tx, EndpointEntity, ctx.actor.teamId, id, 'endpoint', { softDeleted: true });
  }

  private async saveChange(tx: EntityManager, endpoint: EndpointEntity): Promise<EndpointEntity> {
    endpoint.version = (BigInt(endpoint.version) + 1n).toString();
    endpoint.updatedAt = this.deps.clock.now();
    await tx.getRepository(EndpointEntity).save(endpoint);
    return endpoint;
  }
}
