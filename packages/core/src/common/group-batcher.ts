export interface GroupBatcherOptions<T> {
  /** How long the first item of a batch waits for others when it need not wait for a running batch. */
  windowMs: number;
  maxBatch: number;
  /** Runs one batch; never called for more than `maxConcurrent` batches at once. Must not throw. */
  run(batch: T[]): Promise<void>;
  /** Items with the same key never share a batch: the later ones wait for the next one. */
  exclusiveKey(item: T): string | null;
  /** Batches run at once (default 1: one after the other). */
  maxConcurrent?: number;
  /**
   * With maxConcurrent above 1: a batch starts beside running ones only once the oldest of them has run this long
   * (default 0). Below it, items wait for the running batch to end and join the next one, so batches stay few and
   * large under load; a batch that runs long (a large or slow group) no longer holds the other groups back.
   * Running batches that each hold a single group (a hot group's own batches) hold nobody back: the other groups
   * could not have joined them, so waiting would make no batch larger.
   */
  besideAfterMs?: number;
  /**
   * Items of one group never run in two batches at once, and run in the order they were added: while a batch holds a
   * group, the group's later items wait for the next batch after it. Batches of other groups run beside it.
   */
  groupOf?(item: T): string;
  /**
   * An item that finds the batcher idle for at least this long (no batch ran or waited) starts its batch at once
   * (with the items added in the same turn of the event loop), without the window: at a pace that leaves such gaps,
   * another item within the window is unlikely, and a batch of one costs little. Under load batches follow each other
   * with no gap, so nothing changes there. With `groupOf`, the same holds per group while other groups' batches run:
   * an item of a group that added nothing for this long, none of whose items waits or runs, starts a batch at once
   * when one may start beside the running ones (a quiet team does not wait out the window behind a hot team's
   * batches, whose items it could not join anyway). Default: never.
   */
  startAloneAfterIdleMs?: number;
}

/**
 * Coalesces concurrent work of one process into batches: a batch starts `windowMs` after its first item, at once
 * when it is full, and as soon as a running batch is done for the items that arrived meanwhile (they have waited
 * already). With `maxConcurrent` 1 batches run one at a time; with more, a batch of the groups no running batch holds
 * starts beside the running ones, so a group whose batches are large or slow delays no other group.
 */
export class GroupBatcher<T> {
  private waiting: T[] = [];
  private running = 0;
  /** Groups held by running batches. */
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly maxConcurrent: number;
  /** Each running batch: when (ms) it started and how many groups it holds; oldest first. */
  private readonly runningBatches: { startedAt: number; groups: number }[] = [];
  /** When (ms) the batcher last became idle; never busy yet: long ago. */
  private idleSince = Number.NEGATIVE_INFINITY;
  /** With groupOf and startAloneAfterIdleMs: when (ms) each group last added an item (recent ones only). */
  private readonly lastAdded = new Map<string, number>();

  constructor(private readonly options: GroupBatcherOptions<T>) {
    this.maxConcurrent = options.maxConcurrent ?? 1;
  }

  /** Nothing waits and no batch runs. */
  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0;
  }

  add(item: T): void {
    this.waiting.push(item);
    const alone = this.options.startAloneAfterIdleMs;
    const wasIdle = this.running === 0 && this.waiting.length === 1;
    const now = Date.now();
    const quietGroup = alone !== undefined && this.quietGroup(item, alone, now);
    if (alone !== undefined && ((wasIdle && now - this.idleSince >= alone) || quietGroup)) {
      // After the I/O callbacks of this turn of the event loop: requests that arrived together still share a batch.
      setImmediate(() => this.start());
      return;
    }
    if (this.running >= this.maxConcurrent) return;
    // With one batch at a time, items that arrive while it runs go at its end (they have waited already).
    if (this.running > 0 && this.maxConcurrent === 1) return;
    if (this.running === 0 && this.eligible() >= this.options.maxBatch) this.start();
    else this.timer ??= setTimeout(() => this.start(), this.delay());
  }

  /**
   * Whether the item's group is quiet (nothing of it added for `alone` ms, none of it waiting or running) and a batch
   * may start beside the running ones now. Records the item's time for the next call.
   */
  private quietGroup(item: T, alone: number, now: number): boolean {
    const { groupOf } = this.options;
    if (!groupOf) return false;
    const group = groupOf(item);
    const last = this.lastAdded.get(group) ?? Number.NEGATIVE_INFINITY;
    this.lastAdded.set(group, now);
    // Only recent times matter: an older one says what no entry says.
    if (this.lastAdded.size > 1000)
      for (const [key, at] of this.lastAdded) if (now - at >= alone) this.lastAdded.delete(key);
    if (this.running === 0 || this.running >= this.maxConcurrent || now - last < alone) return false;
    if (this.held.has(group) || this.besideWait() > 0) return false;
    let waitingOfGroup = 0;
    for (const waiting of this.waiting) if (groupOf(waiting) === group) waitingOfGroup += 1;
    return waitingOfGroup === 1;
  }

  /** How long a new batch waits: its window, and beside running batches until the oldest has run besideAfterMs. */
  private delay(): number {
    return Math.max(this.options.windowMs, this.besideWait());
  }

  /** How long until a batch may start beside the running ones (0: now, or none runs). */
  private besideWait(): number {
    const oldest = this.runningBatches[0];
    if (oldest === undefined) return 0;
    if (this.options.groupOf && this.runningBatches.every((running) => running.groups === 1)) return 0;
    return oldest.startedAt + (this.options.besideAfterMs ?? 0) - Date.now();
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.running >= this.maxConcurrent) return;
    // Woken early (a batch ended) while another still runs: wait out the rest of its time alone.
    const wait = this.besideWait();
    if (this.running > 0 && wait > 0) {
      this.timer = setTimeout(() => this.start(), wait);
      return;
    }
    const { batch, groups } = this.nextBatch();
    if (batch.length === 0) return;
    this.running += 1;
    const running = { startedAt: Date.now(), groups: groups.size };
    this.runningBatches.push(running);
    for (const group of groups) this.held.add(group);
    void this.options.run(batch).finally(() => {
      this.running -= 1;
      this.runningBatches.splice(this.runningBatches.indexOf(running), 1);
      for (const group of groups) this.held.delete(group);
      if (this.waiting.length > 0) setImmediate(() => this.start());
      else if (this.running === 0) this.idleSince = Date.now();
    });
    // Room for another batch beside this one: the items left (of groups this one holds not) start one in time.
    if (this.running < this.maxConcurrent && this.eligible() > 0)
      this.timer = setTimeout(() => this.start(), this.delay());
  }

  /** Waiting items no running batch's group holds. */
  private eligible(): number {
    const { groupOf } = this.options;
    if (!groupOf || this.held.size === 0) return this.waiting.length;
    return this.waiting.filter((item) => !this.held.has(groupOf(item))).length;
  }

  private nextBatch(): { batch: T[]; groups: Set<string> } {
    const { groupOf, exclusiveKey, maxBatch } = this.options;
    const batch: T[] = [];
    const keys = new Set<string>();
    const groups = new Set<string>();
    /** Groups with an item left waiting: their later items wait too, so a group's items keep their order. */
    const passed = new Set<string>();
    const later: T[] = [];
    for (const item of this.waiting) {
      const group = groupOf ? groupOf(item) : null;
      const key = exclusiveKey(item);
      const blocked =
        batch.length >= maxBatch ||
        (key !== null && keys.has(key)) ||
        (group !== null && (this.held.has(group) || passed.has(group)));
      if (blocked) {
        later.push(item);
        if (group !== null) passed.add(group);
      } else {
        batch.push(item);
        if (key !== null) keys.add(key);
        if (group !== null) groups.add(group);
      }
    }
    this.waiting = later;
    return { batch, groups };
  }
}
