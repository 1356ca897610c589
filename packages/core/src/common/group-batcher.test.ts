import { describe, expect, it } from 'vitest';
import { GroupBatcher } from './group-batcher.js';

interface Item {
  group: string;
  key: string | null;
  n: number;
}

/** A batcher whose batches finish only when the test says so; it records what ran and what ran at once. */
function harness(options: { maxConcurrent?: number; maxBatch?: number; grouped?: boolean; besideAfterMs?: number }) {
  const batches: number[][] = [];
  const finishers: (() => void)[] = [];
  let running = 0;
  let peak = 0;
  const batcher = new GroupBatcher<Item>({
    windowMs: 2,
    maxBatch: options.maxBatch ?? 100,
    maxConcurrent: options.maxConcurrent,
    besideAfterMs: options.besideAfterMs,
    exclusiveKey: (item) => item.key,
    groupOf: options.grouped === false ? undefined : (item) => item.group,
    run: (batch) => {
      batches.push(batch.map((item) => item.n));
      running += 1;
      peak = Math.max(peak, running);
      return new Promise<void>((resolve) =>
        finishers.push(() => {
          running -= 1;
          resolve();
        }),
      );
    },
  });
  return {
    batcher,
    batches,
    get peak() {
      return peak;
    },
    /** Ends the oldest running batch and lets the batcher react. */
    async finish() {
      finishers.shift()!();
      await settle();
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('GroupBatcher', () => {
  it('one at a time by default: what arrives while a batch runs forms the next one', async () => {
    const h = harness({ grouped: false });
    h.batcher.add({ group: 'a', key: null, n: 1 });
    await settle();
    h.batcher.add({ group: 'b', key: null, n: 2 });
    h.batcher.add({ group: 'c', key: null, n: 3 });
    await settle();
    expect(h.batches).toEqual([[1]]);
    await h.finish();
    expect(h.batches).toEqual([[1], [2, 3]]);
    await h.finish();
    expect(h.batcher.idle).toBe(true);
    expect(h.peak).toBe(1);
  });

  it("runs another group's batch beside a running one, never a group in two batches, and keeps a group's order", async () => {
    const h = harness({ maxConcurrent: 2 });
    h.batcher.add({ group: 'hot', key: null, n: 1 });
    await settle();
    // While the hot group's batch runs: more of it, and a quiet group's item, which must not wait for it.
    h.batcher.add({ group: 'hot', key: null, n: 2 });
    h.batcher.add({ group: 'quiet', key: null, n: 3 });
    h.batcher.add({ group: 'hot', key: null, n: 4 });
    await settle();
    expect(h.batches).toEqual([[1], [3]]);
    await h.finish(); // the first hot batch: the hot items that waited run next, in order
    expect(h.batches).toEqual([[1], [3], [2, 4]]);
    await h.finish();
    await h.finish();
    expect(h.batcher.idle).toBe(true);
    expect(h.peak).toBe(2);
  });

  it('never runs more than maxConcurrent batches; a full batch starts at once', async () => {
    const h = harness({ maxConcurrent: 2, maxBatch: 2 });
    for (const [n, group] of ['a', 'b', 'c', 'd', 'e', 'f'].entries()) h.batcher.add({ group, key: null, n });
    await settle();
    expect(h.batches).toEqual([
      [0, 1],
      [2, 3],
    ]);
    await h.finish();
    expect(h.batches.at(-1)).toEqual([4, 5]);
    expect(h.peak).toBe(2);
  });

  it('two items with one exclusive key never share a batch; the later one keeps its group behind it', async () => {
    const h = harness({ maxConcurrent: 2 });
    h.batcher.add({ group: 'a', key: 'k', n: 1 });
    h.batcher.add({ group: 'a', key: 'k', n: 2 });
    h.batcher.add({ group: 'a', key: null, n: 3 });
    h.batcher.add({ group: 'b', key: 'k2', n: 4 });
    await settle();
    expect(h.batches).toEqual([[1, 4]]);
    await h.finish();
    expect(h.batches).toEqual([
      [1, 4],
      [2, 3],
    ]);
  });

  it('with besideAfterMs, starts a batch beside a running one only once that one has run that long', async () => {
    const h = harness({ maxConcurrent: 2, besideAfterMs: 60 });
    h.batcher.add({ group: 'hot', key: null, n: 1 });
    h.batcher.add({ group: 'warm', key: null, n: 0 });
    await settle();
    h.batcher.add({ group: 'quiet', key: null, n: 2 });
    await settle();
    // A short batch of two groups: the quiet item waits for it and goes in the next one.
    expect(h.batches).toEqual([[1, 0]]);
    await h.finish();
    expect(h.batches).toEqual([[1, 0], [2]]);
    await h.finish();

    // A long batch: the quiet item starts beside it once it has run 60 ms.
    h.batcher.add({ group: 'hot', key: null, n: 3 });
    h.batcher.add({ group: 'warm', key: null, n: 5 });
    await settle();
    h.batcher.add({ group: 'quiet', key: null, n: 4 });
    await settle();
    expect(h.batches.at(-1)).toEqual([3, 5]);
    await new Promise((resolve) => setTimeout(resolve, 70));
    expect(h.batches.at(-1)).toEqual([4]);
    expect(h.peak).toBe(2);
  });

  it("with besideAfterMs, a batch of one group (a hot team's) holds no other group back", async () => {
    const h = harness({ maxConcurrent: 2, besideAfterMs: 10_000 });
    h.batcher.add({ group: 'hot', key: null, n: 1 });
    h.batcher.add({ group: 'hot', key: null, n: 2 });
    await settle();
    // The quiet group could not have joined the hot group's batch: it starts beside it at once.
    h.batcher.add({ group: 'quiet', key: null, n: 3 });
    h.batcher.add({ group: 'hot', key: null, n: 4 });
    await settle();
    expect(h.batches).toEqual([[1, 2], [3]]);
    // The hot batch ends while the quiet one runs: the hot group's next batch starts at once too.
    await h.finish();
    expect(h.batches).toEqual([[1, 2], [3], [4]]);
    expect(h.peak).toBe(2);
  });

  it('with startAloneAfterIdleMs, items after a quiet spell start at once together; one right after a batch waits its window', async () => {
    const started: { n: number; waitedMs: number }[] = [];
    const batches: number[][] = [];
    const added = new Map<number, number>();
    const batcher = new GroupBatcher<Item>({
      windowMs: 150,
      maxBatch: 100,
      startAloneAfterIdleMs: 100,
      exclusiveKey: () => null,
      run: async (batch) => {
        batches.push(batch.map((item) => item.n));
        for (const item of batch) started.push({ n: item.n, waitedMs: performance.now() - added.get(item.n)! });
      },
    });
    const add = (n: number) => {
      added.set(n, performance.now());
      batcher.add({ group: 'a', key: null, n });
    };
    add(1); // never busy yet: at once
    await settle();
    add(2); // 10 ms after a batch: the window
    add(3); // joins it
    await new Promise((resolve) => setTimeout(resolve, 300));
    add(4); // idle for about 150 ms: at once, with what arrives in the same turn of the event loop
    add(5);
    await settle();
    expect(batches).toEqual([[1], [2, 3], [4, 5]]);
    const waited = new Map(started.map((s) => [s.n, s.waitedMs]));
    expect(waited.get(1)).toBeLessThan(5);
    expect(waited.get(2)).toBeGreaterThanOrEqual(145);
    expect(waited.get(3)).toBeGreaterThanOrEqual(140);
    expect(waited.get(4)).toBeLessThan(5);
    expect(waited.get(5)).toBeLessThan(5);
  });

  it("with startAloneAfterIdleMs and groups, a quiet group's item starts beside a busy group's batch at once; a busy group's waits its window", async () => {
    const batches: number[][] = [];
    const waited = new Map<number, number>();
    const added = new Map<number, number>();
    const finishers: (() => void)[] = [];
    const batcher = new GroupBatcher<Item>({
      windowMs: 150,
      maxBatch: 100,
      maxConcurrent: 2,
      startAloneAfterIdleMs: 100,
      exclusiveKey: () => null,
      groupOf: (item) => item.group,
      run: (batch) => {
        batches.push(batch.map((item) => item.n));
        for (const item of batch) waited.set(item.n, performance.now() - added.get(item.n)!);
        return new Promise<void>((resolve) => finishers.push(resolve));
      },
    });
    const add = (group: string, n: number) => {
      added.set(n, performance.now());
      batcher.add({ group, key: null, n });
    };
    add('hot', 1); // the batcher was never busy: at once; it runs until the test ends it
    await settle();
    add('hot', 2); // its group runs: waits for that batch
    add('quiet', 3); // nothing of 'quiet' for long, a batch may start beside: at once
    await settle();
    expect(batches).toEqual([[1], [3]]);
    expect(waited.get(3)).toBeLessThan(5);
    finishers.shift()!(); // 'hot' ends: 2 goes next, with no window (it has waited already)
    await settle();
    expect(batches).toEqual([[1], [3], [2]]);
    finishers.shift()!(); // 'quiet' ends; 'hot' still runs
    await settle();
    add('quiet', 4); // 'quiet' added something 20 ms ago: not quiet, it waits its window
    await settle();
    expect(batches).toEqual([[1], [3], [2]]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(batches).toEqual([[1], [3], [2], [4]]);
    expect(waited.get(4)).toBeGreaterThanOrEqual(145);
    for (const finish of finishers.splice(0)) finish();
  });
});
