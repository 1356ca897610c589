import { unitsFor } from '../billing/billing.service.js';
import { ServiceError } from '../common/errors.js';
import { compileRules, type CompiledRules } from '../endpoints/endpoint-rules.js';
import { matchesEventPatterns } from '../endpoints/patterns.js';
import type { MessageBody } from './message-body.js';

/** An endpoint as admission reads it (one JSON row per endpoint). */
export interface CandidateEndpoint {
  id: string;
  tenant_id: string;
  status: 'enabled' | 'paused' | 'disabled';
  deleted: boolean;
  events: string[];
  filter: string | null;
  transform: string | null;
  /** Changes whenever the filter or transform may have: the compiled-rules cache key. */
  rules_version: string;
}

export interface MatchedDelivery {
  endpointId: string;
  /** The frozen transformed bytes; null when the endpoint gets the message body unchanged. */
  body: Buffer | null;
  bodyBytes: number;
  units: number;
}

/** Compiled filters and transforms by endpoint and version, so admission does not recompile them per message. */
export type RuleCache = Map<string, { version: string; rules: CompiledRules }>;
const RULE_CACHE_ENTRIES = 50_000;

function rulesOf(endpoint: CandidateEndpoint, cache: RuleCache): CompiledRules {
  const hit = cache.get(endpoint.id);
  if (hit && hit.version === endpoint.rules_version) return hit.rules;
  const rules = compileRules(endpoint.filter, endpoint.transform);
  if (cache.size >= RULE_CACHE_ENTRIES) cache.clear();
  cache.set(endpoint.id, { version: endpoint.rules_version, rules });
  return rules;
}

export interface MatchInput {
  endpoints: CandidateEndpoint[];
  /** endpoint_ids of the request, or null for every endpoint of the tenant. */
  requested: string[] | null;
  tenantId: string;
  eventType: string;
  body: MessageBody;
  cache: RuleCache;
}

/**
 * The deliveries of a message: every enabled or paused endpoint (of the requested ones, when given) whose event
 * patterns and filter match, each with the bytes it will get. A transform that fails refuses the whole message.
 * Filters and transforms read JSON bodies; an endpoint with a filter does not match another content type, and
 * one with a transform refuses it (transform_failed).
 */
export function matchEndpoints(input: MatchInput): MatchedDelivery[] {
  const { body } = input;
  if (input.requested !== null) checkRequested(input);
  const deliveries: MatchedDelivery[] = [];
  const candidates =
    input.requested === null
      ? input.endpoints
      : input.endpoints.filter((e) => input.requested!.includes(e.id)).sort(byRequestOrder(input.requested));
  for (const endpoint of candidates) {
    if (endpoint.deleted || endpoint.status === 'disabled') continue;
    if (!matchesEventPatterns(endpoint.events, input.eventType)) continue;
    const rules = rulesOf(endpoint, input.cache);
    if (rules.filter && (body.json === null || !rules.filter.matches(body.json.root))) continue;
    let delivered: Buffer | null = null;
    if (rules.transform) {
      const result =
        body.json === null
          ? ({ ok: false, field: '', message: 'only JSON bodies can be transformed' } as const)
          : rules.transform.apply(body.json.text, body.json.root);
      if (!result.ok)
        throw new ServiceError(
          'transform_failed',
          `the transform of endpoint ${endpoint.id} failed: ${result.message}`,
          {
            resourceId: endpoint.id,
          },
        );
      delivered = Buffer.from(result.output, 'utf8');
    }
    const bytes = delivered?.length ?? body.bytes.length;
    deliveries.push({
      endpointId: endpoint.id,
      body: delivered,
      bodyBytes: bytes,
      units: unitsFor(bytes, 'webhooks.delivery_16k'),
    });
  }
  return deliveries;
}

/** endpoint_ids: each must be an endpoint of the tenant that is neither disabled nor deleted. */
function checkRequested(input: MatchInput): void {
  const requested = input.requested!;
  const seen = new Set<string>();
  for (const id of requested) {
    if (seen.has(id))
      throw new ServiceError('invalid_field', `endpoint_ids lists ${id} twice`, { field: 'endpoint_ids' });
    seen.add(id);
    const endpoint = input.endpoints.find((e) => e.id === id);
    const problem =
      !endpoint || endpoint.tenant_id !== input.tenantId
        ? 'is not an endpoint of the tenant'
        : endpoint.deleted
          ? 'is deleted'
          : endpoint.status === 'disabled'
            ? 'is disabled'
            : null;
    if (problem)
      throw new ServiceError('invalid_field', `endpoint_ids: ${id} ${problem}`, {
        field: 'endpoint_ids',
        resourceId: id,
      });
  }
}

function byRequestOrder(requested: string[]): (a: CandidateEndpoint, b: CandidateEndpoint) => number {
  return (a, b) => requested.indexOf(a.id) - requested.indexOf(b.id);
}
