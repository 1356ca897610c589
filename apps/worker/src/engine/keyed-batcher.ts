/**
 * Turns many concurrent single calls into few batch calls without adding latency: an item submitted while a
 * batch is running waits for the next batch, which starts as soon as a slot is free. With one slot and a steady
 * stream, each batch takes everything that arrived during the previous one. With `keyOf`, items of one key never
 * run in two batches at once, and run in the order they were submitted (a later batch takes them once the earlier
 * one is done): what one batch decides for a key is what the next one starts from.
 */
export class KeyedBatcher<I, O> {
  private queue: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private running = 0;

  constructor(
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly options: {
      maxConcurrent: number;
      maxBatch: number;
      minGapMs?: number;
      keyOf?: (item: I) => string;
      /** Work waits on this item (an ordered endpoint's next delivery waits for its head's settle): no gap. */
      urgent?: (item: I) => boolean;
    },
  ) {}

  private lastStart = 0;
  /** Keys held by a batch picked or running: no other batch takes their items meanwhile. */
  private readonly busy = new Set<string>();

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      // The keys this batch holds from the moment it takes its first item, so a batch picked meanwhile skips them.
      const keys = new Set<string>();
      const batch = this.take([], this.options.maxBatch, keys);
      if (batch.length === 0) return; // Everything waiting belongs to a running batch's keys.
      this.running += 1;
      // Let the rest of this tick's submissions join the batch, and under load wait out the gap since the last
      // batch started so that batches grow instead of their number.
      const { urgent } = this.options;
      const gap = urgent && batch.some((entry) => urgent(entry.item)) ? 0 : (this.options.minGapMs ?? 0);
      const wait = Math.max(0, this.lastStart + gap - Date.now());
      const start = (run: () => void) => (wait > 0 ? setTimeout(run, wait) : setImmediate(run));
      start(() => {
        this.lastStart = Date.now();
        this.take(batch, this.options.maxBatch - batch.length, keys);
        this.runBatch(batch.map((entry) => entry.item))
          .then(
            (results) => batch.forEach((entry, i) => entry.resolve(results[i]!)),
            (error: unknown) => batch.forEach((entry) => entry.reject(error)),
          )
          .finally(() => {
            for (const key of keys) this.busy.delete(key);
            this.running -= 1;
            this.pump();
          });
      });
    }
  }

  /**
   * Moves up to `room` waiting entries into `batch`, in order. With keyOf it leaves those whose key another running
   * batch holds (every one of them, so a key's items keep their order), and marks the batch's new keys as held.
   */
  private take(batch: KeyedBatcher<I, O>['queue'], room: number, keys: Set<string>): KeyedBatcher<I, O>['queue'] {
    const { keyOf } = this.options;
    if (!keyOf) {
      batch.push(...this.queue.splice(0, room));
      return batch;
    }
    const kept: KeyedBatcher<I, O>['queue'] = [];
    for (const entry of this.queue) {
      const key = keyOf(entry.item);
      const free = keys.has(key) || !this.busy.has(key);
      if (room > 0 && free) {
        batch.push(entry);
        room -= 1;
        keys.add(key);
        this.busy.add(key);
      } else kept.push(entry);
    }
    this.queue = kept;
    return batch;
  }
}
