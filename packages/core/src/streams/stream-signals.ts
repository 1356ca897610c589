import { randomBytes } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';

/**
 * The channel that ends open streams in whichever server process holds them: a revoked token, a deleted endpoint.
 * Sent inside the transaction that makes the change, so it arrives when (and only if) the change commits; these are
 * rare configuration writes, unlike the wake-ups that wakeEndpoints merges.
 */
export const STREAM_END_CHANNEL = 'svc_stream_end';

export interface StreamEndSignal {
  tokenIds?: string[];
  endpointIds?: string[];
}

/** IDs per notification: a NOTIFY payload is at most 8,000 bytes, and an ID about 30 characters of JSON. */
const IDS_PER_SIGNAL = 200;

/** Ends the streams of these tokens and endpoints, in notifications of at most IDS_PER_SIGNAL IDs each. */
export async function notifyStreamsEnded(tx: EntityManager, signal: StreamEndSignal): Promise<void> {
  const payloads: StreamEndSignal[] = [];
  for (const kind of ['tokenIds', 'endpointIds'] as const) {
    const ids = signal[kind] ?? [];
    for (let i = 0; i < ids.length; i += IDS_PER_SIGNAL) payloads.push({ [kind]: ids.slice(i, i + IDS_PER_SIGNAL) });
  }
  if (payloads.length === 0) return;
  await tx.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [
    STREAM_END_CHANNEL,
    payloads.map((payload) => JSON.stringify(payload)),
  ]);
}

/** A notification's payload, or null when it is not one of ours. */
export function parseStreamEndSignal(payload: string): StreamEndSignal | null {
  try {
    const value = JSON.parse(payload) as StreamEndSignal;
    const ids = (list: unknown) => Array.isArray(list) && list.every((id) => typeof id === 'string');
    if (typeof value !== 'object' || value === null) return null;
    if (value.tokenIds !== undefined && !ids(value.tokenIds)) return null;
    if (value.endpointIds !== undefined && !ids(value.endpointIds)) return null;
    return value;
  } catch {
    return null;
  }
}

/**
 * Wake-ups only streams care about (deliveries given back by a closed or dead connection, room freed by an
 * acknowledgement), on a channel of their own so the push engine's listeners never hear them. New deliveries
 * reach streams through the engine's own channel (svc_delivery_wake), which the stream servers also listen on.
 */
export const STREAM_WAKE_CHANNEL = 'svc_stream_wake';

/**
 * This process's mark on the wake-ups it sends: a process that settled an acknowledgement has woken its own streams
 * already, so it skips its own notification (each one would cost it a claim that finds nothing).
 */
export const STREAM_WAKE_SENDER = randomBytes(6).toString('hex');

/** `sender`: STREAM_WAKE_SENDER for wake-ups whose sender has woken its own streams already (acknowledgements). */
export async function notifyStreamWake(db: DataSource, endpointIds: readonly string[], sender = ''): Promise<void> {
  // A payload is at most 8,000 bytes: 200 IDs of 30 characters each fit.
  for (let i = 0; i < endpointIds.length; i += 200)
    await db.query('SELECT pg_notify($1, $2)', [
      STREAM_WAKE_CHANNEL,
      `${sender}:${endpointIds.slice(i, i + 200).join(',')}`,
    ]);
}

/** The sender and the endpoints of a stream wake-up. */
export function parseStreamWake(payload: string): { sender: string; endpointIds: string[] } {
  const colon = payload.indexOf(':');
  return {
    sender: colon < 0 ? '' : payload.slice(0, colon),
    endpointIds: payload
      .slice(colon + 1)
      .split(',')
      .filter((id) => id.length > 0),
  };
}
