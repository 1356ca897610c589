/**
 * Turns many concurrent single calls into few batch calls without adding latency: an item submitted while a
 * batch is running waits for the next batch, which starts as soon as a slot is free. With one slot and a steady
 * stream, each batch takes everything that arrived during the previous one.
 */
export class Coalescer<I, O> {
  private queue: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = [];
  private running = 0;

  constructor(
    private readonly runBatch: (items: I[]) => Promise<O[]>,
    private readonly options: { maxConcurrent: number; maxBatch: number; minGapMs?: number },
  ) {}

  private lastStart = 0;

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.running += 1;
      // Let the rest of this tick's submissions join the batch, and under load wait out the gap since the last
      // batch started so that batches grow instead of their number.
      const wait = Math.max(0, this.lastStart + (this.options.minGapMs ?? 0) - Date.now());
      const start = (run: () => void) => (wait > 0 ? setTimeout(run, wait) : setImmediate(run));
      start(() => {
        this.lastStart = Date.now();
        batch.push(...this.queue.splice(0, this.options.maxBatch - batch.length));
        this.runBatch(batch.map((entry) => entry.item))
          .then(
            (results) => batch.forEach((entry, i) => entry.resolve(results[i]!)),
            (error: unknown) => batch.forEach((entry) => entry.reject(error)),
          )
          .finally(() => {
            this.running -= 1;
            this.pump();
          });
      });
    }
  }
}
