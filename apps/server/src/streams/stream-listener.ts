import type { DataSource } from 'typeorm';
import type { FastifyBaseLogger } from 'fastify';
import { pgPoolOf } from '@svc/db';

/** The part of a pooled pg client that LISTEN needs. */
interface ListeningClient {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(): unknown;
  release(destroy?: boolean): void;
}

/** How long the listener waits before connecting again after its connection failed. */
const RECONNECT_MS = 1000;

/**
 * One connection of the server's pool LISTENs on the stream channels while the process holds streams: new
 * deliveries (the engine's wake channel), room freed by acknowledgements, and streams to end. `onNotification`
 * gets each one; `onReconnect` says notifications may have been lost (the holder looks for due work itself).
 * Taken from the TypeORM pool so it needs no DATABASE_URL of its own (npm start's embedded Postgres has none).
 */
export class StreamListener {
  private client: ListeningClient | null = null;
  private connecting: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: DataSource,
    private readonly channels: readonly string[],
    private readonly onNotification: (channel: string, payload: string) => void,
    private readonly onReconnect: () => void,
    private readonly logger: FastifyBaseLogger,
  ) {}

  /** Starts listening unless it already does; resolves once the LISTENs are in place (or failed: it retries). */
  start(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.connecting;
    const client = this.client;
    this.client = null;
    if (!client) return;
    client.removeAllListeners();
    client.on('error', () => undefined);
    // Destroyed rather than returned: a pooled connection must not keep listening for someone else.
    client.release(true);
  }

  private async connect(): Promise<void> {
    let client: ListeningClient | null = null;
    try {
      client = await pgPoolOf(this.db).connect();
      client.on('notification', (message) => this.onNotification(message.channel, message.payload ?? ''));
      client.on('error', () => this.lost(client!));
      for (const channel of this.channels) await client.query(`LISTEN "${channel}"`);
      if (this.closed) {
        client.removeAllListeners();
        client.release(true);
        return;
      }
      this.client = client;
      this.onReconnect();
    } catch (error) {
      this.logger.warn({ err: error }, 'stream listener could not connect; retrying');
      if (client) this.lost(client);
      else this.scheduleReconnect();
    }
  }

  private lost(client: ListeningClient): void {
    client.removeAllListeners();
    client.on('error', () => undefined);
    client.release(true);
    if (this.client === client) this.client = null;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, RECONNECT_MS);
  }
}
