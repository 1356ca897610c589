import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DELIVERY_WAKE_CHANNEL,
  newId,
  parseStreamEndSignal,
  parseStreamWake,
  parseWakePayload,
  STREAM_END_CHANNEL,
  STREAM_WAKE_CHANNEL,
  STREAM_WAKE_SENDER,
  type Acknowledged,
  type Services,
  type StreamAck,
  type StreamAckResult,
  type StreamCaller,
  streamTokenDigest,
} from '@svc/core';
import type { FastifyBaseLogger } from 'fastify';
import type { StreamSettings } from '../config.js';
import { MemoryBuckets } from '../public-limits.js';
import { StreamListener } from './stream-listener.js';
import { StreamSession } from './stream-session.js';

/** The most acknowledgements one request may carry (StreamAcksInput): a budget's burst holds at least that many. */
const MAX_ACKS_PER_REQUEST = 100;
/** How often a process beats the connections it holds (their rows' beat_at). */
const BEAT_MS = 1000;
/** How often a process that holds streams runs the stream sweep (dead connections, leases nobody acknowledged). */
const SWEEP_MS = 2000;

/**
 * The streams one server process holds: it registers each in stream_connections (limits per endpoint and team),
 * beats them, routes wake-ups to them (new deliveries, freed room, revoked tokens, deleted endpoints) and, while it
 * holds any, polls for due work in one statement and sweeps what nobody acknowledged. Nothing runs while it holds
 * no stream.
 */
export class StreamHub {
  private readonly sessions = new Map<string, StreamSession>();
  private readonly byEndpoint = new Map<string, Set<StreamSession>>();
  private readonly listener: StreamListener;
  private timers: NodeJS.Timeout[] = [];
  private closing = false;
  /** Which of an endpoint's streams claims with the next acknowledgement (round robin). */
  private turn = 0;
  /** Acknowledgements each stream token may send this process (SVC_STREAM_ACKS_PER_SECOND), keyed by its hash. */
  private readonly ackBudget: MemoryBuckets;

  constructor(
    private readonly services: Services,
    private readonly settings: StreamSettings,
    private readonly docsUrl: string,
    private readonly logger: FastifyBaseLogger,
  ) {
    this.ackBudget = new MemoryBuckets(
      { rate: settings.acksPerSecond, burst: Math.max(MAX_ACKS_PER_REQUEST, 2 * settings.acksPerSecond) },
      services.clock,
    );
    this.listener = new StreamListener(
      services.db,
      [DELIVERY_WAKE_CHANNEL, STREAM_WAKE_CHANNEL, STREAM_END_CHANNEL],
      (channel, payload) => this.notified(channel, payload),
      () => this.pumpAll(),
      logger,
    );
  }

  /** How many streams this process holds (tests and metrics). */
  get size(): number {
    return this.sessions.size;
  }

  /**
   * Opens a stream for an authenticated caller: 429 past a limit (thrown before anything is written), else the
   * answer becomes a text/event-stream that lasts until the client goes or the service ends it.
   */
  async open(
    caller: StreamCaller,
    remoteAddress: string,
  ): Promise<(request: IncomingMessage, response: ServerResponse) => void> {
    if (this.closing) throw new Error('the server is stopping');
    const id = newId('streamConnection', this.services.clock);
    await this.services.streamConnections.open(
      { id, teamId: caller.teamId, endpointId: caller.endpointId, tokenId: caller.tokenId, remoteAddress },
      { perEndpoint: this.settings.maxConnectionsPerEndpoint, perTeam: this.settings.maxConnectionsPerTeam },
    );
    return (_request, response) => {
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        // Proxies that buffer answers (nginx) pass this one through as it is written.
        'x-accel-buffering': 'no',
      });
      response.write(': connected\n\n');
      const session = new StreamSession({
        id,
        teamId: caller.teamId,
        endpointId: caller.endpointId,
        tokenId: caller.tokenId,
        response,
        services: this.services,
        settings: this.settings,
        docsUrl: this.docsUrl,
        logger: this.logger,
        onEnd: (ended) => this.forget(ended),
      });
      this.sessions.set(id, session);
      let group = this.byEndpoint.get(caller.endpointId);
      if (!group) this.byEndpoint.set(caller.endpointId, (group = new Set()));
      group.add(session);
      this.startTimers();
      // Listening before the first claim: a delivery admitted between the two is not missed.
      void this.listener.start().then(() => session.pump());
    };
  }

  /**
   * Settles acknowledgements (null: the token is not one of the endpoint's). When this process holds a stream of the
   * endpoint that may claim now, the settlement and that stream's next claim are one transaction and one round
   * trip, and the deliveries it leases are written to the stream before this answers; the endpoint's streams in
   * other processes hear the wake-up sent in that transaction. This process's other streams of the endpoint are
   * pumped (all of them when no claim went with the settlement).
   */
  async acknowledge(endpointId: string, token: string, acks: readonly StreamAck[]): Promise<StreamAckResult[] | null> {
    const deliveries = this.services.streamDeliveries;
    // The endpoint's streams here take turns, so several connections share its deliveries as before.
    const candidates = [...(this.byEndpoint.get(endpointId) ?? [])].filter((session) => session.mayClaim);
    const claimer = candidates[(this.turn = (this.turn + 1) % 1_000_000) % Math.max(1, candidates.length)];
    let claimedBy: StreamSession | null = null;
    let answer: Acknowledged | null | undefined;
    if (claimer) {
      const ran = await claimer.claimWith(async (want) => {
        const acknowledged = await deliveries.acknowledge(endpointId, acks, {
          token,
          claimFor: {
            connectionId: claimer.id,
            want,
            local: [...(this.byEndpoint.get(endpointId) ?? [])].map((s) => s.id),
          },
        });
        return { value: acknowledged, claim: acknowledged?.claim ?? null };
      });
      answer = ran?.value;
      if (ran?.value?.claim) claimedBy = claimer;
    }
    if (answer === undefined) answer = await deliveries.acknowledge(endpointId, acks, { token });
    if (answer === null) return null;
    if (answer.results.includes('settled'))
      for (const session of this.byEndpoint.get(endpointId) ?? []) if (session !== claimedBy) session.pump();
    return answer.results;
  }

  /**
   * Spends `count` acknowledgements (at least 1: a request refused for its body costs one) of the token's budget in
   * this process, before anything is looked up: 429 rate_limited with Retry-After past it, so a reader flooding the
   * route (unknown IDs, full batches, bodies that are not valid) costs a bounded number of statements a second.
   */
  spendAcks(token: string, count: number): void {
    this.ackBudget.take(streamTokenDigest(token).toString('hex'), Math.max(1, count));
  }

  /** Wakes this process's streams of the endpoint (others hear the channel). */
  pumpEndpoint(endpointId: string): void {
    for (const session of this.byEndpoint.get(endpointId) ?? []) session.pump();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.stopTimers();
    await Promise.all([...this.sessions.values()].map((s) => s.end({ code: 'server_stopping', message: 'reconnect' })));
    await this.listener.close();
  }

  private notified(channel: string, payload: string): void {
    if (channel === STREAM_END_CHANNEL) {
      const signal = parseStreamEndSignal(payload);
      if (!signal) return;
      const tokens = new Set(signal.tokenIds ?? []);
      const endpoints = new Set(signal.endpointIds ?? []);
      for (const session of this.sessions.values()) {
        if (tokens.has(session.tokenId))
          void session.end({ code: 'token_revoked', message: 'the stream token was revoked' });
        else if (endpoints.has(session.endpointId))
          void session.end({ code: 'endpoint_gone', message: 'the endpoint was deleted' });
      }
      return;
    }
    let targets: string[] | undefined;
    if (channel === DELIVERY_WAKE_CHANNEL) targets = parseWakePayload(payload)?.map((t) => t.endpointId);
    else {
      const wake = parseStreamWake(payload);
      // Its own acknowledgements' wake-ups: this process woke its streams when it settled them.
      if (wake.sender === STREAM_WAKE_SENDER) return;
      targets = wake.endpointIds;
    }
    if (targets === undefined) return this.pumpAll();
    for (const endpointId of targets) this.pumpEndpoint(endpointId);
  }

  private pumpAll(): void {
    for (const session of this.sessions.values()) session.pump();
  }

  private forget(session: StreamSession): void {
    this.sessions.delete(session.id);
    const group = this.byEndpoint.get(session.endpointId);
    group?.delete(session);
    if (group?.size === 0) this.byEndpoint.delete(session.endpointId);
    if (this.sessions.size === 0) this.stopTimers();
  }

  private startTimers(): void {
    if (this.timers.length > 0) return;
    const every = (ms: number, run: () => Promise<void>) => {
      let busy = false;
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        run()
          .catch((error: unknown) => this.logger.warn({ err: error }, 'stream maintenance failed; retrying'))
          .finally(() => {
            busy = false;
          });
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(BEAT_MS, async () => {
      const gone = await this.services.streamConnections.beat([...this.sessions.keys()]);
      for (const id of gone)
        void this.sessions.get(id)?.end({ code: 'stream_closed', message: 'the token or the endpoint is gone' });
    });
    every(SWEEP_MS, async () => {
      await this.services.streamDeliveries.sweep();
    });
    every(this.settings.pollMs, async () => {
      for (const id of await this.services.streamDeliveries.endpointsWithDueWork([...this.byEndpoint.keys()]))
        this.pumpEndpoint(id);
    });
  }

  private stopTimers(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }
}
