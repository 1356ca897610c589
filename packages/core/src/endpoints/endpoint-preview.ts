import { parseStrict } from '@svc/json';
import { unitsFor } from '../billing/billing.service.js';
import type { CallContext } from '../common/context.js';
import { compileRules } from './endpoint-rules.js';
import type { PreviewInput } from './endpoint.inputs.js';
import type { EndpointService } from './endpoint.service.js';
import { matchesEventPatterns } from './patterns.js';

export type PreviewReason =
  'endpoint_disabled' | 'event_type_not_subscribed' | 'filter_not_matched' | 'transform_failed';

/** What an endpoint would do with a payload: nothing is sent, stored or charged. */
export interface PreviewResult {
  endpointId: string;
  eventType: string | null;
  matches: boolean;
  /** The first reason the payload would not be delivered, or null. */
  reason: PreviewReason | null;
  /** null when no event_type was given. */
  eventTypeMatched: boolean | null;
  filterMatched: boolean;
  transformApplied: boolean;
  transformError: { field: string; message: string } | null;
  contentType: 'application/json';
  /** The exact bytes that would be delivered (the minified payload, or the transform's output); null when the transform fails. */
  body: string | null;
  bodyBytes: number | null;
  deliveryUnits: number | null;
}

export async function previewEndpoint(
  endpoints: EndpointService,
  ctx: CallContext,
  input: PreviewInput,
): Promise<PreviewResult> {
  const endpoint = await endpoints.getEndpointEntity(ctx, input.endpoint_id);
  const rules = compileRules(endpoint.filter, endpoint.transform);
  const payload = input.payload === null ? 'null' : input.payload.minified;
  const root = parseStrict(payload);
  const eventTypeMatched =
    input.event_type === undefined ? null : matchesEventPatterns(endpoint.events, input.event_type);
  const filterMatched = rules.filter ? rules.filter.matches(root) : true;
  const transformed = rules.transform ? rules.transform.apply(payload, root) : ({ ok: true, output: payload } as const);
  const body = transformed.ok ? transformed.output : null;
  const reason: PreviewReason | null =
    endpoint.status === 'disabled'
      ? 'endpoint_disabled'
      : eventTypeMatched === false
        ? 'event_type_not_subscribed'
        : !filterMatched
          ? 'filter_not_matched'
          : !transformed.ok
            ? 'transform_failed'
            : null;
  const bodyBytes = body === null ? null : Buffer.byteLength(body, 'utf8');
  return {
    endpointId: endpoint.id,
    eventType: input.event_type ?? null,
    matches: reason === null,
    reason,
    eventTypeMatched,
    filterMatched,
    transformApplied: rules.transform !== null && transformed.ok,
    transformError: transformed.ok ? null : { field: transformed.field, message: transformed.message },
    contentType: 'application/json',
    body,
    bodyBytes,
    deliveryUnits: bodyBytes === null ? null : unitsFor(bodyBytes, 'webhooks.delivery_16k'),
  };
}
