/** One acknowledgement: the status the receiver's handler answered, or `error` when it gave none. */
export interface StreamAck {
  delivery_id: string;
  attempt: number;
  status: number | 'error';
}

/** What the service did with an acknowledgement (`stale`: the lease had ended; `unknown`: not this endpoint's). */
export type AckResult = 'settled' | 'stale' | 'unknown';

/** The service's answer to a batch that it refused as a whole: a bad token, an unknown endpoint. */
export class AckRefused extends Error {
  constructor(readonly response: Response) {
    super(`acknowledgements refused: HTTP ${response.status}`);
  }
}

export interface AckBatcherOptions {
  /** Sends one batch; resolves with each acknowledgement's result, or throws AckRefused or a network error. */
  send: (acks: StreamAck[]) => Promise<Map<string, AckResult>>;
  /** Acknowledgements per request: the service takes 1 to 100. */
  maxBatch?: number;
  /** How long the first acknowledgement of a batch waits for others before it is sent. */
  lingerMs?: number;
  /** Called when a batch cannot be sent (it is tried again after a pause), or is refused (it is dropped). */
  onError: (error: unknown) => void;
  onResult?: (ack: StreamAck, result: AckResult) => void;
}

const RETRY_PAUSE_MS = 1000;

/**
 * Acknowledgements gathered into batches: up to `maxBatch` at once, or whatever `lingerMs` after the first one
 * arrived. One batch is in flight at a time, so the acknowledgements of one connection reach the service in the
 * order the handler finished (an ordered endpoint's head first). A batch that fails on the network is kept and sent
 * again; the service answers a repeated acknowledgement `stale` or `settled`, never twice as a new attempt.
 */
export class AckBatcher {
  private readonly queue: StreamAck[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  private sending: Promise<void> | undefined;
  private readonly maxBatch: number;
  private readonly lingerMs: number;

  constructor(private readonly options: AckBatcherOptions) {
    this.maxBatch = options.maxBatch ?? 100;
    this.lingerMs = options.lingerMs ?? 50;
  }

  /** Acknowledgements not yet answered by the service. */
  get pending(): number {
    return this.queue.length;
  }

  add(ack: StreamAck): void {
    this.queue.push(ack);
    if (this.queue.length >= this.maxBatch) this.kick(0);
    else this.kick(this.lingerMs);
  }

  /** Sends everything queued now, once (network errors included: what fails is left queued). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sending;
    if (this.queue.length > 0) await this.sendBatches(false);
  }

  /** Stops the timer; what is still queued is not sent. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private kick(delayMs: number): void {
    if (this.sending || this.closed) return;
    if (this.timer !== undefined) {
      if (delayMs > 0) return;
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.sending = this.sendBatches(true).finally(() => {
        this.sending = undefined;
        if (this.queue.length > 0) this.kick(this.queue.length >= this.maxBatch ? 0 : this.lingerMs);
      });
    }, delayMs);
  }

  private async sendBatches(retryLater: boolean): Promise<void> {
    while (this.queue.length > 0 && !this.closed) {
      const batch = this.queue.slice(0, this.maxBatch);
      try {
        const results = await this.options.send(batch);
        this.queue.splice(0, batch.length);
        for (const ack of batch) this.options.onResult?.(ack, results.get(ack.delivery_id) ?? 'unknown');
      } catch (error) {
        this.options.onError(error);
        // Refused as a whole (401, 404, 422): sending it again cannot help.
        if (error instanceof AckRefused) this.queue.splice(0, batch.length);
        else if (retryLater) await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
        else return;
      }
    }
  }
}
