import type { EntityManager } from 'typeorm';
import { checkReceiverUrl, type UrlPolicy } from '@svc/egress';
import type { Limits } from '../catalog/limits.js';
import { ServiceError, invalidField } from '../common/errors.js';
import type { DeliveryMode, EndpointEntity, EndpointOrdering } from './endpoint.entity.js';
import type { UpdateEndpointInput } from './endpoint.inputs.js';
import type { EndpointChange } from './endpoint-writes.js';

/** 422 unsafe_url / invalid_field (field url) unless the URL is an acceptable receiver. */
export function checkEndpointUrl(url: string, urlPolicy: UrlPolicy): { host: string } {
  const check = checkReceiverUrl(url, urlPolicy);
  if (!check.ok) throw new ServiceError(check.code, check.message, { field: 'url' });
  return { host: check.host };
}

/**
 * Where an endpoint's deliveries go: a push endpoint needs an acceptable URL; a stream endpoint has none (its
 * receiver connects to the service) and no Authorization value to send, so either given is 422 invalid_field.
 */
export function checkDeliveryTarget(
  input: { delivery_mode: DeliveryMode; url?: string | undefined; authorization?: string | null | undefined },
  urlPolicy: UrlPolicy,
): { url: string; host: string } {
  if (input.delivery_mode === 'stream') {
    if (input.url !== undefined)
      throw invalidField('url', 'a stream endpoint has no URL: its receiver opens GET /endpoints/{id}/stream');
    if (input.authorization !== undefined && input.authorization !== null)
      throw invalidField('authorization', 'a stream endpoint sends no Authorization value (it has no URL)');
    return { url: '', host: '' };
  }
  if (input.url === undefined) throw invalidField('url', 'url is required');
  return { url: input.url, ...checkEndpointUrl(input.url, urlPolicy) };
}

/** 422 invalid_field (max_concurrency) past the deployment's cap. */
export function checkConcurrency(limits: Limits, maxConcurrency: number | undefined): void {
  const cap = limits.max_endpoint_concurrency.value;
  if (maxConcurrency !== undefined && maxConcurrency > cap)
    throw new ServiceError('invalid_field', `max_concurrency is at most ${cap}`, { field: 'max_concurrency' });
}

/** 422 invalid_field (max_concurrency): an ordered endpoint has one delivery in flight at a time. */
export function checkOrderedConcurrency(ordering: EndpointOrdering, maxConcurrency: number | undefined): void {
  if (ordering === 'ordered' && maxConcurrency !== undefined && maxConcurrency !== 1)
    throw new ServiceError(
      'invalid_field',
      'an ordered endpoint sends one delivery at a time: max_concurrency must be 1 (or left out)',
      { field: 'max_concurrency' },
    );
}

/** 409 quota_exceeded when the tenant or the team has all the endpoints it may have. */
export async function checkEndpointQuotas(
  tx: EntityManager,
  limits: Limits,
  teamId: string,
  tenantId: string,
): Promise<void> {
  const rows: { tenant_count: string; team_count: string }[] = await tx.query(
    `SELECT count(*) FILTER (WHERE tenant_id = $2) AS tenant_count, count(*) AS team_count
       FROM endpoints WHERE team_id = $1 AND deleted_at IS NULL`,
    [teamId, tenantId],
  );
  const counts = rows[0]!;
  if (Number(counts.tenant_count) >= limits.max_endpoints_per_tenant.value)
    throw new ServiceError(
      'quota_exceeded',
      `the tenant has reached its limit of ${limits.max_endpoints_per_tenant.value} endpoints`,
    );
  if (Number(counts.team_count) >= limits.max_endpoints.value)
    throw new ServiceError(
      'quota_exceeded',
      `the team has reached its limit of ${limits.max_endpoints.value} endpoints`,
    );
}

/**
 * A URL with a new host must come with authorization (or null) and headers (or {}), so credentials meant for
 * one host never go to another. Any new URL moves url_revision (and resets health, in endpoint_health).
 */
export function urlChange(
  endpoint: EndpointEntity,
  url: string,
  input: UpdateEndpointInput,
  urlPolicy: UrlPolicy,
): EndpointChange {
  const { host } = checkEndpointUrl(url, urlPolicy);
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
