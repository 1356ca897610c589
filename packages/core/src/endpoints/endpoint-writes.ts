import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import type { UrlPolicy } from '@svc/egress';
import type { Clock } from '../common/clock.js';
import { ServiceError, notFound } from '../common/errors.js';
import { wakeEndpoints } from '../engine/wake-endpoints.js';
import { queryRows } from '../common/transaction.js';
import { notifyStreamsEnded } from '../streams/stream-signals.js';
import { checkOrderedConcurrency, urlChange } from './endpoint-checks.js';
import type { EndpointCredentialsService } from './endpoint-credentials.service.js';
import { EndpointEntity } from './endpoint.entity.js';
import { endpointsWithState, joinEndpointState, type EndpointState } from './endpoint-state.js';
import type { UpdateEndpointInput } from './endpoint.inputs.js';
import { recordUrlRevision } from './url-revisions.js';

export /** The columns a change may set; version and updated_at follow from any of them. */
type EndpointChange = Partial<Omit<EndpointEntity, 'id' | 'teamId' | 'tenantId' | 'version' | 'createdAt'>>;

/** PATCH: the columns the request changes (none: an unchanged request, which keeps the version). */
export function endpointChange(
  endpoint: EndpointEntity,
  input: UpdateEndpointInput,
  credentials: EndpointCredentialsService,
  urlPolicy: UrlPolicy,
): EndpointChange {
  const id = endpoint.id;
  const change: EndpointChange = {};
  if (endpoint.deliveryMode === 'stream') {
    if (input.url !== undefined)
      throw new ServiceError('invalid_field', 'a stream endpoint has no URL (delivery_mode is set on create only)', {
        field: 'url',
      });
    if (input.authorization !== undefined && input.authorization !== null)
      throw new ServiceError('invalid_field', 'a stream endpoint sends no Authorization value (it has no URL)', {
        field: 'authorization',
      });
  }
  const set = <K extends keyof EndpointChange>(key: K, value: EndpointEntity[K] | undefined) => {
    if (value !== undefined && JSON.stringify(value) !== JSON.stringify(endpoint[key])) change[key] = value;
  };
  if (input.url !== undefined && input.url !== endpoint.url)
    Object.assign(change, urlChange(endpoint, input.url, input, urlPolicy));
  if (input.status !== undefined && input.status !== endpoint.status) {
    if (endpoint.status === 'disabled')
      throw new ServiceError('invalid_state', 'the service disabled this endpoint; use POST /endpoints/{id}/resume');
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
  if (input.headers !== undefined && !credentials.sameHeaders(endpoint, input.headers))
    Object.assign(change, credentials.sealHeaders(id, input.headers));
  if (input.authorization !== undefined && !credentials.sameAuthorization(endpoint, input.authorization))
    change.authorizationSealed = credentials.sealAuthorization(id, input.authorization);
  return change;
}

/** The team's endpoint `id` (not deleted), as a query of alias `e`. */
export function ownedEndpointQuery(
  manager: EntityManager,
  teamId: string,
  id: string,
): SelectQueryBuilder<EndpointEntity> {
  return manager
    .getRepository(EndpointEntity)
    .createQueryBuilder('e')
    .where('e.id = :id AND e.team_id = :teamId AND e.deleted_at IS NULL', { id, teamId });
}

/**
 * Locks the configuration row for a change (FOR NO KEY UPDATE, like lockOwned) and reads its health and queued
 * count in the same query without locking them: the engine keeps writing those while an endpoint is edited.
 */
export async function lockEndpointWithState(
  tx: EntityManager,
  teamId: string,
  id: string,
): Promise<{ endpoint: EndpointEntity; state: EndpointState }> {
  const qb = ownedEndpointQuery(tx, teamId, id).setLock('for_no_key_update', undefined, ['e']);
  const [found] = await endpointsWithState(joinEndpointState(qb));
  if (!found) throw notFound('endpoint');
  return found;
}

/**
 * Writes a change to a row locked by this transaction with one UPDATE (save() would read the row again first),
 * moves the version and wakes the endpoint's owner at commit.
 */
export async function applyEndpointChange(
  tx: EntityManager,
  clock: Clock,
  endpoint: EndpointEntity,
  change: EndpointChange,
): Promise<EndpointEntity> {
  const update = {
    ...change,
    version: (BigInt(endpoint.version) + 1n).toString(),
    updatedAt: clock.now(),
  };
  await tx.getRepository(EndpointEntity).update({ id: endpoint.id }, update);
  if (change.urlRevision !== undefined) await recordUrlRevision(tx, { ...endpoint, ...update }, update.updatedAt);
  // The endpoint's owner reads its configuration again at once (enable, resume: waiting deliveries go now).
  wakeEndpoints(tx, [endpoint.id], { reread: true });
  return Object.assign(endpoint, update);
}

/**
 * Deletes every endpoint of a tenant not deleted yet (the tenant goes with them), in one UPDATE. Their open streams
 * end at once, in whichever server process holds them, as a deleted endpoint's do (EndpointService.deleteEndpoint).
 */
export async function deleteTenantEndpoints(tx: EntityManager, tenantId: string, now: Date): Promise<void> {
  const deleted = await queryRows<{ id: string; delivery_mode: string }>(
    tx,
    `UPDATE endpoints SET deleted_at = $2, updated_at = $2, version = version + 1
      WHERE tenant_id = $1 AND deleted_at IS NULL RETURNING id, delivery_mode`,
    [tenantId, now],
  );
  const streams = deleted.filter((row) => row.delivery_mode === 'stream').map((row) => row.id);
  if (streams.length > 0) await notifyStreamsEnded(tx, { endpointIds: streams });
}
