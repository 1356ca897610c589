import type { ServerResponse } from 'node:http';
import { forgetConnectionLeases, streamEventData, type Services, type StreamClaim } from '@svc/core';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamSettings } from '../config.js';

/** Deliveries asked for per claim; the endpoint's max_concurrency bounds what a claim really leases. */
const CLAIM_BATCH = 100;

export interface StreamSessionInit {
  id: string;
  teamId: string;
  endpointId: string;
  tokenId: string;
  response: ServerResponse;
  services: Services;
  settings: StreamSettings;
  docsUrl: string;
  logger: FastifyBaseLogger;
  /** Called once when the stream has ended, whatever ended it. */
  onEnd(session: StreamSession): void;
}

/**
 * One open stream (docs/streams.md). It claims what its endpoint may offer, writes each delivery as an event and
 * claims again on a wake-up, an acknowledgement, its recheck time or the holder's poll. A reader that stops reading
 * fills its socket buffer: `write` answers false and nothing more is claimed until the buffer drains, so a slow
 * reader costs no claims while it waits, and one that never drains is closed after the stall timeout.
 */
export class StreamSession {
  readonly id: string;
  readonly endpointId: string;
  readonly tokenId: string;
  private claiming = false;
  /** The claim under way (while `claiming`, unless an acknowledgement's runs). */
  private current: Promise<void> = Promise.resolve();
  private again = false;
  private draining = false;
  private ended = false;
  private recheck: NodeJS.Timeout | null = null;
  private stall: NodeJS.Timeout | null = null;
  /** When the first lease of the endpoint ends, as the last claim read it: timeouts are settled from then on. */
  private leaseEndsAt: Date | null = null;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(private readonly init: StreamSessionInit) {
    this.id = init.id;
    this.endpointId = init.endpointId;
    this.tokenId = init.tokenId;
    const { response, settings } = init;
    response.on('drain', () => {
      this.draining = false;
      if (this.stall) clearTimeout(this.stall);
      this.stall = null;
      this.pump();
    });
    response.on('close', () => void this.end(null));
    this.heartbeat = setInterval(() => {
      if (!this.draining) this.write(': keepalive\n\n');
    }, settings.heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * Whether this stream may claim with an acknowledgement: it is open, its reader keeps up, and no lease of the
   * endpoint is due to be settled as a timeout first (the usual claim does that).
   */
  get mayClaim(): boolean {
    if (this.ended || this.draining) return false;
    return this.leaseEndsAt === null || this.leaseEndsAt > this.init.services.clock.now();
  }

  /** Looks for deliveries to offer now (coalesced: a pump during a claim runs once more after it). */
  pump(): void {
    if (this.ended || this.draining) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    this.again = false;
    this.current = this.claim().finally(() => {
      this.claiming = false;
      if (this.again) this.pump();
    });
  }

  /**
   * Ends the stream: with an `error` event first when a reason is given and the socket takes it, then the
   * connection's row goes and what it held unacknowledged is offered again (to this receiver's next stream, or
   * another one of the endpoint).
   */
  async end(reason: { code: string; message: string } | null): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    if (this.recheck) clearTimeout(this.recheck);
    if (this.stall) clearTimeout(this.stall);
    const { response } = this.init;
    if (reason && !response.destroyed && response.writable && !this.draining)
      response.write(`event: error\ndata: ${JSON.stringify(reason)}\n\n`);
    if (this.draining) response.destroy();
    else response.end();
    this.init.onEnd(this);
    forgetConnectionLeases(this.id);
    try {
      const endpointId = await this.init.services.streamConnections.close(this.id);
      if (endpointId) await this.init.services.streamDeliveries.wakeStreams([endpointId]);
    } catch (error) {
      // The sweep frees the leases of a connection whose row stays (it stops beating).
      this.init.logger.warn({ err: error, connection: this.id }, 'stream connection not closed cleanly');
    }
  }

  /**
   * Runs `first` as this stream's next claim when the stream may claim (after the claim under way, if any; the
   * reader keeping up, no lease of the endpoint due to be settled as a timeout first): an acknowledgement settled in the claim's
   * own transaction (stream-hub.ts). Answers `first`'s value, or undefined when the stream may not claim now (the
   * caller settles without claiming, and pumps).
   */
  async claimWith<T>(
    first: (want: number) => Promise<{ value: T; claim: StreamClaim | null }>,
  ): Promise<{ value: T } | undefined> {
    // A claim under way (a wake-up's, a poll's) ends first: the acknowledgement's claim is the next one.
    for (let waits = 0; this.claiming && waits < 3; waits += 1) await this.current;
    if (this.claiming || !this.mayClaim) return undefined;
    this.claiming = true;
    this.again = false;
    try {
      const { value, claim } = await first(CLAIM_BATCH);
      // Written before the caller answers: the events are on their way when the acknowledgement's answer is. No
      // claim was made (a settlement with events, a refused token): the caller pumps.
      if (claim) await this.claim(claim);
      return { value };
    } finally {
      this.claiming = false;
      if (this.again) this.pump();
    }
  }

  /** Claims and writes what it got; `first`: a claim made already (with an acknowledgement's settlement). */
  private async claim(first?: StreamClaim): Promise<void> {
    const { services, endpointId, docsUrl } = this.init;
    let made = first;
    try {
      for (;;) {
        const settleTimedOut = this.leaseEndsAt !== null && this.leaseEndsAt <= services.clock.now();
        const claim =
          made ?? (await services.streamDeliveries.claim(this.id, endpointId, CLAIM_BATCH, { settleTimedOut }));
        made = undefined;
        this.leaseEndsAt = claim.leaseEndsAt;
        if (this.ended) return;
        if (!claim.open)
          return void (await this.end({ code: 'endpoint_gone', message: 'the endpoint was deleted or disabled' }));
        // A claim's events go out in one write (one chunk, one segment where they fit): a reader that batches its
        // acknowledgements gets them together and answers them in one request, and the socket one syscall.
        const { response } = this.init;
        let refused = false;
        response.cork();
        try {
          for (const attempt of claim.attempts) {
            const data = streamEventData(attempt, docsUrl);
            const written = this.write(
              `id: ${attempt.deliveryId}.${attempt.attemptNumber}\nevent: delivery\ndata: ${JSON.stringify(data)}\n\n`,
            );
            if (!written) refused = true;
          }
        } finally {
          response.uncork();
        }
        // While corked, write() answers false for what the response buffers itself (Node 22 buffers a corked response
        // in the response); uncorked, it went to the socket. Only a socket that could not take it all is behind, and
        // only then comes the 'drain' that ends the wait: waiting without one would close a reader that reads.
        if (refused && (response.socket?.writableNeedDrain ?? true)) this.startDraining();
        this.scheduleRecheck(claim.recheckAt);
        // A full batch may have left more due: claim again unless the reader is behind.
        if (claim.attempts.length < CLAIM_BATCH || this.draining) return;
      }
    } catch (error) {
      this.init.logger.warn({ err: error, connection: this.id }, 'stream claim failed; retrying at the next poll');
    }
  }

  private write(text: string): boolean {
    const { response } = this.init;
    if (this.ended || response.destroyed) return false;
    return response.write(text);
  }

  private startDraining(): void {
    if (this.draining) return;
    this.draining = true;
    this.stall = setTimeout(
      () => void this.end({ code: 'slow_reader', message: 'the stream was not read; reconnect' }),
      this.init.settings.stallMs,
    );
    this.stall.unref();
  }

  /** Claims again when the first due row or lease end the claim saw comes, unless a wake-up comes first. */
  private scheduleRecheck(at: Date | null): void {
    if (this.recheck) clearTimeout(this.recheck);
    this.recheck = null;
    if (at === null) return;
    const delay = at.getTime() - this.init.services.clock.now().getTime();
    // Due already and not taken: the endpoint had no room (max_concurrency, the ordered head, its circuit); an
    // acknowledgement or a wake-up makes room and pumps. Past the poll interval the holder's poll covers it.
    if (delay <= 0 || delay > this.init.settings.pollMs) return;
    this.recheck = setTimeout(() => {
      this.recheck = null;
      this.pump();
    }, delay + 5);
    this.recheck.unref();
  }
}
