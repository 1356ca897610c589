import type { EntityManager } from 'typeorm';

/** One operational event the engine emits (the events module stores and coalesces them). */
export interface EngineEvent {
  type:
    | 'webhooks.delivery.failed'
    | 'webhooks.delivery.expired'
    | 'webhooks.endpoint.disabled'
    | 'webhooks.endpoint.recovered'
    | 'webhooks.endpoint.failing'
    | 'webhooks.endpoint.held';
  teamId: string;
  tenantId: string;
  resourceId: string;
  resourceVersion?: string;
  data: Record<string, string | number | boolean | null>;
}

/** Where the engine writes its operational events, in its own transactions. */
export interface EngineEventSink {
  emit(tx: EntityManager, events: readonly EngineEvent[]): Promise<void>;
}
