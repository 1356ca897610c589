/**
 * Who gets the free delivery slots (docs/delivery.md, "Fairness"): across teams first, then across a team's
 * endpoints. Each slot goes to the team holding the fewest slots (its running attempts plus what this plan gave it),
 * then, within the team, to the endpoint holding the fewest; ties go to the lane served longest ago. A lane takes a
 * slot only while its headroom stays free after it (the reserve for a slow lane), so slow receivers never hold the
 * last slots.
 */

/** A lane that could start attempts now, with what its own limits allow. */
export interface SlotCandidate {
  endpointId: string;
  teamKey: string;
  /** The most attempts its own limits allow now (max_concurrency, rate tokens). */
  want: number;
  inFlight: number;
  lastServedAt: number;
  /** The slots that must stay free after each one it takes (the reserve for a slow lane; see dispatcher.ts). */
  headroom: number;
  /** Counts against `slowCap` (an attempt older than a second in flight, slow answers lately). */
  slow: boolean;
}

export interface SlotPlanInput {
  candidates: readonly SlotCandidate[];
  /** This worker's attempts in flight per team. */
  teamRunning: ReadonlyMap<string, number>;
  /** Slots free in the deployment (as this worker knows it) that this worker may use. */
  free: number;
  /** The most slots slow lanes may take in this plan (this worker's share while other workers' teams wait). */
  slowCap: number;
  /** Most lanes in one claim. */
  maxLanes: number;
}

export interface PlannedRequest {
  endpointId: string;
  want: number;
  headroom: number;
}

export interface SlotPlan {
  /** In the order their first slot was given: the claim gives the deployment's slots in this order. */
  requests: PlannedRequest[];
  /** Some lane could have started more had there been slots. */
  starved: boolean;
}

interface TeamTurn {
  level: number;
  given: number;
  lanes: SlotCandidate[];
  next: number;
}

export function planSlots(input: SlotPlanInput): SlotPlan {
  let free = input.free;
  let slowCap = input.slowCap;
  const given = new Map<SlotCandidate, number>();
  const requests: PlannedRequest[] = [];
  const teams = groupTeams(input);
  let admitted = 0;
  let level = teams[0]?.level ?? 0;
  const active: TeamTurn[] = [];
  while (free > 0 && (active.length > 0 || admitted < teams.length)) {
    while (admitted < teams.length && teams[admitted]!.level <= level) active.push(teams[admitted++]!);
    if (active.length === 0) {
      level = teams[admitted]!.level;
      continue;
    }
    for (let t = 0; t < active.length && free > 0; t++) {
      const team = active[t]!;
      if (team.level + team.given > level) continue;
      const lane = nextLane(team, given, free, slowCap, requests.length < input.maxLanes);
      if (!lane) {
        active.splice(t--, 1);
        continue;
      }
      const before = given.get(lane) ?? 0;
      if (before === 0) requests.push({ endpointId: lane.endpointId, want: 0, headroom: lane.headroom });
      given.set(lane, before + 1);
      team.given += 1;
      free -= 1;
      if (lane.slow) slowCap -= 1;
    }
    level += 1;
  }
  const wants = new Map([...given].map(([lane, n]) => [lane.endpointId, n]));
  for (const request of requests) request.want = wants.get(request.endpointId)!;
  const starved = input.candidates.some((c) => c.want > (given.get(c) ?? 0));
  return { requests, starved };
}

function groupTeams(input: SlotPlanInput): TeamTurn[] {
  const byTeam = new Map<string, TeamTurn>();
  for (const candidate of input.candidates) {
    if (candidate.want <= 0) continue;
    let team = byTeam.get(candidate.teamKey);
    if (!team) {
      team = { level: input.teamRunning.get(candidate.teamKey) ?? 0, given: 0, lanes: [], next: 0 };
      byTeam.set(candidate.teamKey, team);
    }
    team.lanes.push(candidate);
  }
  const oldest = (team: TeamTurn) => Math.min(...team.lanes.map((l) => l.lastServedAt));
  const teams = [...byTeam.values()];
  for (const team of teams) team.lanes.sort((a, b) => a.inFlight - b.inFlight || a.lastServedAt - b.lastServedAt);
  return teams.sort((a, b) => a.level - b.level || oldest(a) - oldest(b));
}

/** The team's next lane in turn that can take one more slot; null when none can. */
function nextLane(
  team: TeamTurn,
  given: ReadonlyMap<SlotCandidate, number>,
  free: number,
  slowCap: number,
  mayAddLane: boolean,
): SlotCandidate | null {
  for (let i = 0; i < team.lanes.length; i++) {
    const lane = team.lanes[(team.next + i) % team.lanes.length]!;
    const already = given.get(lane) ?? 0;
    if (already >= lane.want || free <= lane.headroom || (lane.slow && slowCap <= 0)) continue;
    if (already === 0 && !mayAddLane) continue;
    team.next = (team.next + i + 1) % team.lanes.length;
    return lane;
  }
  return null;
}
