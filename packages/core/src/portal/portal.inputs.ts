import { z } from 'zod';
import { CreateEndpointInput, UpdateEndpointInput } from '../endpoints/endpoint.inputs.js';

/**
 * An endpoint the tenant creates in the portal: the fields a receiver cares about. Delivery tuning (rate,
 * concurrency, retries, timeout, transform, metadata) stays the operator's; the portal leaves them at their defaults.
 * `events` defaults to the session's event types (every type when it has none). A stream endpoint (`delivery_mode`)
 * has no URL: the tenant's receiver connects (docs/streams.md).
 */
export const PortalEndpointInput = CreateEndpointInput.pick({
  delivery_mode: true,
  url: true,
  name: true,
  description: true,
  filter: true,
  headers: true,
  authorization: true,
  signature_scheme: true,
}).extend({ events: CreateEndpointInput.shape.events.removeDefault().optional() });
export type PortalEndpointInput = z.output<typeof PortalEndpointInput>;

/** A change the tenant makes: the same fields, and pause or enable (only the service disables). */
export const PortalEndpointUpdate = UpdateEndpointInput.pick({
  url: true,
  name: true,
  description: true,
  events: true,
  filter: true,
  headers: true,
  authorization: true,
}).extend({ status: z.enum(['enabled', 'paused'], { message: 'must be enabled or paused' }).optional() });
export type PortalEndpointUpdate = z.output<typeof PortalEndpointUpdate>;
