import { z } from 'zod';
import { defineJobContract } from '../jobs/job-contract.js';

/**
 * Webhook deliveries are not pg-boss jobs: each pending delivery has a row in `delivery_queue`, written in the
 * transaction that makes it pending, and the worker that owns its endpoint claims due rows in batches (see
 * docs/delivery.md, "The engine"). pg-boss runs the engine's maintenance around that queue: this sweep, every
 * 15 seconds, expires deliveries whose window ended (whether or not any claim reaches them), frees leases of
 * workers that died, and puts back pending deliveries that lost their queue row.
 */
export const deliveryReconcileJob = defineJobContract({
  queue: 'delivery.reconcile',
  version: 1,
  payload: z.object({}),
  cron: '* * * * *',
  expireInSeconds: 120,
  retryLimit: 3,
  retryDelaySeconds: 10,
});

/** Postgres NOTIFY channel on which admission and the API wake the owners of endpoints at commit. */
export const DELIVERY_WAKE_CHANNEL = 'svc_delivery_wake';

/** A NOTIFY payload is at most 8000 bytes; past this many, the payload says "look everywhere" instead. */
const MAX_WAKE_PAYLOAD = 7_000;
/** The payload that wakes every endpoint of every owner (a discovery pass). */
export const WAKE_ALL = '*';

/** An endpoint to look at again: its rows (`reread` false), or also its configuration and circuit (an edit, resume). */
export interface WakeTarget {
  endpointId: string;
  reread: boolean;
}

/** Marks an endpoint whose configuration changed in a payload (its owner reads its circuit and status again). */
const REREAD_MARK = '~';

/**
 * The endpoints a commit made work due for, as a NOTIFY payload: their IDs, comma separated, once each; with
 * `reread`, each marked so its owner also reads its configuration and circuit again.
 */
export function wakePayload(endpointIds: readonly string[], options: { reread?: boolean } = {}): string {
  const mark = options.reread ? REREAD_MARK : '';
  const payload = [...new Set(endpointIds)].map((id) => mark + id).join(',');
  return payload.length > MAX_WAKE_PAYLOAD ? WAKE_ALL : payload;
}

/** The endpoints of a NOTIFY payload; null for WAKE_ALL (or an empty payload from an old sender). */
export function parseWakePayload(payload: string | undefined): WakeTarget[] | null {
  if (!payload || payload === WAKE_ALL) return null;
  return payload
    .split(',')
    .filter((id) => id.length > 0)
    .map((id) =>
      id.startsWith(REREAD_MARK) ? { endpointId: id.slice(1), reread: true } : { endpointId: id, reread: false },
    );
}
