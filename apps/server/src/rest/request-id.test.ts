import { describe, expect, it } from 'vitest';
import { newRequestId } from './request-id.js';

describe('newRequestId', () => {
  it('gives req_ and 16 base64url characters, never the same twice across several refills of its pool', () => {
    const ids = Array.from({ length: 2000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Each of the 96 bits varies: no byte of the pool is left unfilled (a zero run would show as "AAAA").
    const decoded = ids.map((id) => Buffer.from(id.slice(4), 'base64url'));
    for (let bit = 0; bit < 96; bit += 1) {
      const ones = decoded.filter((b) => (b[bit >> 3]! >> (7 - (bit & 7))) & 1).length;
      expect(ones, `bit ${bit}`).toBeGreaterThan(800);
      expect(ones, `bit ${bit}`).toBeLessThan(1200);
    }
  });
});
