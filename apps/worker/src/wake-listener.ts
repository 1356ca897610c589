import pg from 'pg';
import type { Logger } from 'pino';
import { poolConfig } from '@svc/db';

export interface WakeListener {
  close(): Promise<void>;
}

/**
 * LISTENs on a Postgres channel and calls `wake` with each notification's payload, so an idle worker starts on new
 * work at once (admission notifies at commit) instead of at its next poll; `wake()` without a payload after a
 * (re)connection means "anything may have arrived". Reconnects after a connection loss (a
 * Postgres restart); polling covers the gap.
 */
export function listenForWake(
  databaseUrl: string,
  channel: string,
  wake: (payload?: string) => void,
  logger: Logger,
): WakeListener {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async (): Promise<void> => {
    const { connectionString } = poolConfig(databaseUrl, 1);
    const next = new pg.Client({ connectionString });
    next.on('notification', (message) => wake(message.payload ?? ''));
    next.on('error', () => reconnect());
    next.on('end', () => reconnect());
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      // Work may have arrived while we were not listening.
      wake();
    } catch (error) {
      logger.warn({ err: error }, 'wake listener could not connect; retrying');
      next.removeAllListeners();
      void next.end().catch(() => undefined);
      reconnect();
    }
  };

  const reconnect = () => {
    if (closed || retry) return;
    client = null;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, 1000);
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const current = client;
      client = null;
      current?.removeAllListeners();
      // An error while it closes (Postgres stopping at the same moment) is of no interest, but unhandled it would crash.
      current?.on('error', () => undefined);
      await current?.end().catch(() => undefined);
    },
  };
}
