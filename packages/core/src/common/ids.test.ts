import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.js';
import { isWellFormedId, newId } from './ids.js';

describe('newId', () => {
  it('makes prefixed IDs that sort in creation order, also within one millisecond', () => {
    const clock = new ManualClock();
    const ids = Array.from({ length: 500 }, (_, i) => {
      if (i % 100 === 0) clock.advance(1);
      return newId('tenant', clock);
    });
    expect(ids.every((id) => isWellFormedId(id, 'tenant'))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sorts later times after earlier ones', () => {
    const clock = new ManualClock('2026-01-01T00:00:00Z');
    const early = newId('message', clock);
    clock.set('2027-01-01T00:00:00Z');
    expect(newId('message', clock) > early).toBe(true);
  });
});
