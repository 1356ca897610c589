import type { DataSource } from 'typeorm';
import type { HotSql } from '@svc/db';
import type { Clock } from '../common/clock.js';
import type { EngineEventSink } from '../deliveries/delivery-records.js';
import type { EndpointCredentialsService } from '../endpoints/endpoint-credentials.service.js';
import type { DispatchOwnershipService } from '../engine/dispatch-ownership.service.js';
import type { SettlementService } from '../engine/settlement.service.js';
import { claimForStream, type StreamClaim } from './stream-claim.js';
import type { StreamConnectionService } from './stream-connections.service.js';
import {
  acknowledge,
  settleTimedOut,
  type Acknowledged,
  type AcknowledgeOptions,
  type StreamAck,
} from './stream-settle.js';
import { notifyStreamWake, STREAM_WAKE_SENDER } from './stream-signals.js';

export interface StreamDeliveryDeps {
  db: DataSource;
  hot: HotSql;
  clock: Clock;
  credentials: EndpointCredentialsService;
  events: EngineEventSink;
  settlement: SettlementService;
  ownership: DispatchOwnershipService;
  connections: StreamConnectionService;
}

/**
 * The delivery side of stream endpoints (docs/streams.md): what a connection is offered (claim), what its receiver
 * answered (acknowledge), and the leases nobody answered (sweep). Everything settles through SettlementService, so a
 * streamed attempt leaves the records a pushed one with the same answer would.
 */
export class StreamDeliveryService {
  constructor(private readonly deps: StreamDeliveryDeps) {}

  /**
   * Leases up to `want` due deliveries to the connection; first, when `settleTimedOut` (a lease of the endpoint may
   * have ended: the caller's last claim said when), settles its lapsed leases as timeouts.
   */
  async claim(
    connectionId: string,
    endpointId: string,
    want: number,
    options: { settleTimedOut?: boolean } = {},
  ): Promise<StreamClaim> {
    if (options.settleTimedOut ?? true) await settleTimedOut(this.deps, endpointId);
    return claimForStream(this.deps, connectionId, endpointId, want);
  }

  /**
   * Settles the acknowledgements, if `options.token` is a valid stream token of the endpoint (else null: 401);
   * every stream of the endpoint is told, since room (or the next head) is free. With `options.claimFor` the
   * settlement, a claim for that stream of this process and that wake-up go in one transaction (the claim is in the
   * answer); else the wake-up is not waited for, and its sender ignores it: the caller wakes its own process's
   * streams itself.
   */
  async acknowledge(
    endpointId: string,
    acks: readonly StreamAck[],
    options: AcknowledgeOptions,
  ): Promise<Acknowledged | null> {
    const answer = await acknowledge(this.deps, endpointId, acks, options);
    if (answer && answer.claim === null && answer.results.includes('settled'))
      void notifyStreamWake(this.deps.db, [endpointId], STREAM_WAKE_SENDER).catch(() => undefined);
    return answer;
  }

  /** Tells every stream of these endpoints, in every server process, to look for deliveries now. */
  wakeStreams(endpointIds: readonly string[]): Promise<void> {
    return notifyStreamWake(this.deps.db, endpointIds);
  }

  /**
   * Of these endpoints, those with a delivery nobody holds that is due now, or a lease that ended unacknowledged:
   * one statement for every stream a process holds (its fallback behind lost wake-ups), one index probe each.
   */
  async endpointsWithDueWork(endpointIds: readonly string[]): Promise<string[]> {
    if (endpointIds.length === 0) return [];
    const rows = (await this.deps.db.query(
      `SELECT w.id FROM unnest($1::text[]) AS w(id)
        WHERE EXISTS (SELECT 1 FROM delivery_queue q WHERE q.endpoint_id = w.id AND q.due_at <= $2)`,
      [endpointIds, this.deps.clock.now()],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * Maintenance (the worker's reconciliation job, and every server process that holds streams): connections whose
   * process died give their leases back, and leases nobody acknowledged in time become `timeout` attempts, so both
   * happen with no stream open. Returns how many timeouts it settled.
   */
  async sweep(): Promise<number> {
    const freed = await this.deps.connections.releaseDead();
    let settled = 0;
    for (let n = await settleTimedOut(this.deps, null); n > 0; n = await settleTimedOut(this.deps, null)) settled += n;
    if (freed.length > 0) await notifyStreamWake(this.deps.db, freed);
    return settled;
  }
}
