import { describe, expect, it } from 'vitest';
import { matchesEventPatterns } from './patterns.js';

describe('matchesEventPatterns', () => {
  it.each([
    [['*'], 'order.created', true],
    [['order.created'], 'order.created', true],
    [['order.created'], 'order.created.v2', false],
    [['order.*'], 'order.created', true],
    [['order.*'], 'order.created.v2', true],
    [['order.*'], 'order', false],
    [['order.*'], 'orders.created', false],
    [['invoice.paid', 'order.*'], 'invoice.paid', true],
    [['invoice.paid', 'order.*'], 'invoice.void', false],
  ])('%j matches %s: %s', (patterns, eventType, expected) => {
    expect(matchesEventPatterns(patterns, eventType)).toBe(expected);
  });
});
