export interface SerialBatcherOptions<T> {
  /** How long the first item of a batch waits for others when nothing runs. */
  windowMs: number;
  maxBatch: number;
  /** Runs one batch; never called again before the previous call settled. Must not throw. */
  run(batch: T[]): Promise<void>;
  /** Items with the same key never share a batch: the later ones wait for the next one. */
  exclusiveKey(item: T): string | null;
}

/**
 * Coalesces concurrent work of one process into batches run one at a time: a batch starts `windowMs` after its
 * first item when nothing runs, at once when it is full, and as soon as the previous batch is done for the items
 * that arrived meanwhile (they have waited already).
 */
export class SerialBatcher<T> {
  private waiting: T[] = [];
  private running = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly options: SerialBatcherOptions<T>) {}

  add(item: T): void {
    this.waiting.push(item);
    if (this.running) return;
    if (this.waiting.length >= this.options.maxBatch) this.start();
    else this.timer ??= setTimeout(() => this.start(), this.options.windowMs);
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running || this.waiting.length === 0) return;
    this.running = true;
    void this.options.run(this.nextBatch()).finally(() => {
      this.running = false;
      if (this.waiting.length > 0) setImmediate(() => this.start());
    });
  }

  private nextBatch(): T[] {
    const batch: T[] = [];
    const keys = new Set<string>();
    const later: T[] = [];
    for (const item of this.waiting) {
      const key = this.options.exclusiveKey(item);
      if (batch.length >= this.options.maxBatch || (key !== null && keys.has(key))) later.push(item);
      else {
        batch.push(item);
        if (key !== null) keys.add(key);
      }
    }
    this.waiting = later;
    return batch;
  }
}
