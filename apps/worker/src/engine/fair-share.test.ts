import { describe, expect, it } from 'vitest';
import { planSlots, type SlotCandidate } from './fair-share.js';

function lane(endpointId: string, teamKey: string, extra: Partial<SlotCandidate> = {}): SlotCandidate {
  return { endpointId, teamKey, want: 3, inFlight: 0, lastServedAt: 0, headroom: 0, slow: false, ...extra };
}

const wants = (plan: ReturnType<typeof planSlots>) =>
  Object.fromEntries(plan.requests.map((r) => [r.endpointId, r.want]));

describe('fair slot planning', () => {
  it('gives the slots across teams first: a team with many endpoints gets no more than a team with one', () => {
    const plan = planSlots({
      candidates: [lane('a1', 'A'), lane('a2', 'A'), lane('a3', 'A'), lane('b1', 'B')],
      teamRunning: new Map(),
      free: 4,
      slowCap: Infinity,
      maxLanes: 500,
    });
    const given = wants(plan);
    expect((given['a1'] ?? 0) + (given['a2'] ?? 0) + (given['a3'] ?? 0)).toBe(2);
    expect(given['b1']).toBe(2);
    expect(plan.starved).toBe(true);
  });

  it('spreads a team’s slots over its endpoints before giving one endpoint a second', () => {
    const plan = planSlots({
      candidates: [lane('a1', 'A'), lane('a2', 'A'), lane('a3', 'A')],
      teamRunning: new Map(),
      free: 3,
      slowCap: Infinity,
      maxLanes: 500,
    });
    expect(wants(plan)).toEqual({ a1: 1, a2: 1, a3: 1 });
  });

  it('counts what a team already runs: the team holding fewer slots is served first', () => {
    const plan = planSlots({
      candidates: [lane('a1', 'A'), lane('b1', 'B')],
      teamRunning: new Map([['A', 3]]),
      free: 3,
      slowCap: Infinity,
      maxLanes: 500,
    });
    // B is raised to A's three before A gets another.
    expect(wants(plan)).toEqual({ b1: 3 });
    expect(plan.requests[0]!.endpointId).toBe('b1');
  });

  it('never lets a slow lane take the headroom it must leave free; a fast lane takes it', () => {
    const slowA = lane('slow-a', 'A', { headroom: 2, slow: true });
    const slowB = lane('slow-b', 'B', { headroom: 2, slow: true });
    const onlySlow = planSlots({
      candidates: [slowA, slowB],
      teamRunning: new Map(),
      free: 6,
      slowCap: Infinity,
      maxLanes: 500,
    });
    expect(wants(onlySlow)).toEqual({ 'slow-a': 2, 'slow-b': 2 });
    expect(onlySlow.starved).toBe(true);

    const withFast = planSlots({
      candidates: [slowA, slowB, lane('fast', 'C')],
      teamRunning: new Map([
        ['A', 2],
        ['B', 2],
      ]),
      free: 2,
      slowCap: Infinity,
      maxLanes: 500,
    });
    expect(wants(withFast)).toEqual({ fast: 2 });
  });

  it('lets a lane of unknown speed take all but its headroom of one', () => {
    const plan = planSlots({
      candidates: [lane('new', 'N', { want: 1, headroom: 1 })],
      teamRunning: new Map(),
      free: 1,
      slowCap: Infinity,
      maxLanes: 500,
    });
    expect(plan.requests).toEqual([]);
    expect(plan.starved).toBe(true);
  });

  it('caps slow lanes at the share while other workers wait; fast lanes are not capped', () => {
    const plan = planSlots({
      candidates: [lane('slow', 'A', { headroom: 1, slow: true }), lane('fast', 'B')],
      teamRunning: new Map(),
      free: 10,
      slowCap: 1,
      maxLanes: 500,
    });
    expect(wants(plan)).toEqual({ slow: 1, fast: 3 });
  });

  it('gives ties to the lane served longest ago, and stops adding lanes at the claim’s limit', () => {
    const plan = planSlots({
      candidates: [lane('recent', 'A', { lastServedAt: 200 }), lane('old', 'B', { lastServedAt: 100 })],
      teamRunning: new Map(),
      free: 1,
      slowCap: Infinity,
      maxLanes: 500,
    });
    expect(wants(plan)).toEqual({ old: 1 });
    const limited = planSlots({
      candidates: [lane('a', 'A'), lane('b', 'B'), lane('c', 'C')],
      teamRunning: new Map(),
      free: 9,
      slowCap: Infinity,
      maxLanes: 2,
    });
    expect(limited.requests).toHaveLength(2);
    expect(limited.requests.reduce((n, r) => n + r.want, 0)).toBe(6);
  });

  it('levels teams far apart: the teams holding fewest are raised first, the busiest gets none', () => {
    const candidates = Array.from({ length: 500 }, (_, i) => lane(`e${i}`, `T${i}`, { want: 3 }));
    const teamRunning = new Map(candidates.map((c, i) => [c.teamKey, i * 4]));
    const plan = planSlots({ candidates, teamRunning, free: 30, slowCap: Infinity, maxLanes: 500 });
    // Team 0 holds 0, team 1 holds 4, ...: ten teams each take three before team 10 (holding 40) gets anything.
    expect(plan.requests.map((r) => r.endpointId).sort()).toEqual(
      ['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7', 'e8', 'e9'].sort(),
    );
    expect(plan.requests.every((r) => r.want === 3)).toBe(true);
  });
});
