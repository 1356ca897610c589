import { compareJsonNumbers } from './decimal.js';
import type { JsonNode, JsonObjectNode } from './node.js';

/**
 * Semantic equality: numbers as exact decimals, strings by decoded value, objects by key set regardless of member
 * order, arrays in order. Uses a work list, not recursion, so any parsed depth is safe.
 */
export function jsonNodesEqual(a: JsonNode, b: JsonNode): boolean {
  const pairs: Array<[JsonNode, JsonNode]> = [[a, b]];
  while (pairs.length > 0) {
    const [left, right] = pairs.pop()!;
    const children = shallowCompare(left, right);
    if (children === null) return false;
    for (const pair of children) pairs.push(pair);
  }
  return true;
}

/** null when the two differ at this level; otherwise the child pairs that still need comparing. */
function shallowCompare(left: JsonNode, right: JsonNode): Array<[JsonNode, JsonNode]> | null {
  switch (left.kind) {
    case 'string':
      return right.kind === 'string' && left.value === right.value ? [] : null;
    case 'number':
      return right.kind === 'number' && compareJsonNumbers(left.raw, right.raw) === 0 ? [] : null;
    case 'array':
      if (right.kind !== 'array' || left.items.length !== right.items.length) return null;
      return left.items.map((item, index): [JsonNode, JsonNode] => [item, right.items[index]!]);
    case 'object':
      return right.kind === 'object' ? pairMembersByKey(left, right) : null;
    default:
      return left.kind === right.kind ? [] : null;
  }
}

function pairMembersByKey(left: JsonObjectNode, right: JsonObjectNode): Array<[JsonNode, JsonNode]> | null {
  if (left.members.length !== right.members.length) return null;
  const rightByKey = new Map(right.members.map((member) => [member.key, member.value]));
  const pairs: Array<[JsonNode, JsonNode]> = [];
  for (const member of left.members) {
    const counterpart = rightByKey.get(member.key);
    if (counterpart === undefined) return null;
    pairs.push([member.value, counterpart]);
  }
  return pairs;
}
