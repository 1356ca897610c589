import { describe, expect, it } from 'vitest';
import { KeyedBatcher } from './keyed-batcher.js';

interface Item {
  key: string;
  n: number;
}

/** A batch runner that records which items ran together and holds each batch until released. */
function recorder() {
  const batches: Item[][] = [];
  const running = new Set<string>();
  const overlaps: string[] = [];
  const run = async (items: Item[]) => {
    batches.push(items);
    const keys = [...new Set(items.map((item) => item.key))];
    for (const key of keys) if (running.has(key)) overlaps.push(key);
    for (const key of keys) running.add(key);
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const key of keys) running.delete(key);
    return items.map((item) => `${item.key}${item.n}`);
  };
  return { batches, overlaps, run };
}

describe('KeyedBatcher', () => {
  it('with keyOf, never runs one key in two batches at once, and keeps each key in submission order', async () => {
    const r = recorder();
    const batcher = new KeyedBatcher(r.run, { maxConcurrent: 2, maxBatch: 3, keyOf: (item: Item) => item.key });
    const items = [
      ...Array.from({ length: 7 }, (_, n) => ({ key: 'a', n })),
      ...Array.from({ length: 4 }, (_, n) => ({ key: 'b', n })),
    ];
    const results = await Promise.all(items.map((item) => batcher.submit(item)));
    expect(results).toEqual(items.map((item) => `${item.key}${item.n}`));
    expect(r.overlaps).toEqual([]);
    for (const key of ['a', 'b']) {
      const order = r.batches
        .flat()
        .filter((item) => item.key === key)
        .map((item) => item.n);
      expect(order).toEqual([...order].sort((x, y) => x - y));
    }
    // Two slots were used: b's items did not wait for all of a's.
    expect(r.batches.length).toBeGreaterThan(1);
  });

  it('without keyOf, batches of one key may run side by side (the behaviour keyOf exists to prevent)', async () => {
    const r = recorder();
    const batcher = new KeyedBatcher(r.run, { maxConcurrent: 2, maxBatch: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, n) => batcher.submit({ key: 'a', n })));
    expect(r.overlaps.length).toBeGreaterThan(0);
  });
});
