import type { StreamEventData } from '@svc/core';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/**
 * A plain Server-Sent Events reader over fetch, for tests: it collects every event of a stream and can wait for
 * some. `pause()` stops reading (the socket buffer fills, as with a receiver that never reads).
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  ended = false;
  private readonly controller = new AbortController();
  private reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
  private paused = false;
  private resumeReading: (() => void) | null = null;

  private constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  static async open(url: string, token: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = new SseClient(url, token);
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
      signal: client.controller.signal,
    });
    client.status = response.status;
    if (response.status !== 200 || !response.body) {
      client.ended = true;
      client.errorBody = await response.text();
      return client;
    }
    client.reader = response.body.getReader();
    void client.read();
    return client;
  }

  /** The answer's body when the stream did not open. */
  errorBody = '';

  /** Deliveries received so far, parsed. */
  get deliveries(): StreamEventData[] {
    return this.events.filter((e) => e.event === 'delivery').map((e) => JSON.parse(e.data) as StreamEventData);
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.resumeReading?.();
    this.resumeReading = null;
  }

  close(): void {
    this.controller.abort();
  }

  async waitFor<T>(what: string, probe: () => T | undefined, ms = 15_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async waitForDeliveries(n: number, ms?: number): Promise<StreamEventData[]> {
    return this.waitFor(`${n} deliveries`, () => (this.deliveries.length >= n ? this.deliveries : undefined), ms);
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        if (this.paused) await new Promise<void>((resolve) => (this.resumeReading = resolve));
        const { value, done } = await this.reader!.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          this.parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // Aborted by close(), or the server ended the connection.
    }
    this.ended = true;
  }

  private parse(block: string): void {
    const event: SseEvent = { id: null, event: 'message', data: '' };
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) event.id = line.slice(4);
      else if (line.startsWith('event: ')) event.event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length === 0 && event.id === null && event.event === 'message') return;
    event.data = data.join('\n');
    this.events.push(event);
  }
}
