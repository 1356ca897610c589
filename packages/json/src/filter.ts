/**
 * Endpoint filters: which messages an endpoint receives, decided on the message's JSON body.
 *
 * A filter is given as JSON text, not as a JS value, so that its numbers keep their exact spelling (1.0e3 must
 * equal 1000, 0.1 must differ from 0.10000000000000001). A filter node is one of:
 *
 * - a condition `{"path": <JSON Pointer>, "op": <operator>, "value": <JSON value>}`, exactly these three keys;
 * - a group with exactly one key: `{"all": [node, ...]}` or `{"any": [node, ...]}` (1 to 50 nodes), or
 *   `{"not": node}` (a single node).
 *
 * The top-level filter is an object: a group or a single condition. A group adds one level (the top-level group is
 * level 1; conditions add none) and groups nest at most 5 levels. A filter holds at most 50 conditions in all.
 *
 * `path` is an RFC 6901 pointer into the body ('' is the whole body); array indexes must be canonical ('01' and
 * '-' name nothing). With `v` the value found there, or missing:
 *
 * - eq: v is present and equal to value: numbers as exact decimals, strings decoded, arrays in order, objects
 *   whatever their member order.
 * - ne: v is present and not equal to value. A missing v never matches ne.
 * - in: value is an array of 1 to 50 JSON values (of any types); v is present and equal to one of them.
 * - exists: value is true or false; true matches a present v (null is present), false a missing one.
 * - gt, gte, lt, lte: value is a number or a string; two numbers compare exactly, two strings by Unicode code
 *   points; anything else (a type mismatch, a missing v) does not match.
 * - prefix: value is a string; v is a string whose code points begin with value's.
 *
 * So only `exists: false` matches a missing value. `all` matches when every child does, `any` when at least one
 * does, `not` when its child does not.
 *
 * An invalid filter throws FilterSpecError whose `path` is the dotted location of the offending part inside the
 * filter (`all.2.op`, `any.0.not.path`; '' for the whole filter).
 */
import { compareCodePoints, startsWithCodePoints } from './codepoint.js';
import { compareJsonNumbers } from './decimal.js';
import { jsonNodesEqual } from './equal.js';
import { JsonSyntaxError } from './errors.js';
import type { JsonArrayNode, JsonNode, JsonObjectNode } from './node.js';
import { parseStrict } from './parse.js';
import { parsePointer, resolvePointer } from './pointer.js';
import { childLocation, jsonKindName, membersByKey } from './spec-input.js';

export const FILTER_OPERATORS = ['eq', 'ne', 'in', 'exists', 'gt', 'gte', 'lt', 'lte', 'prefix'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** Deepest nesting of groups; the top-level group is level 1. */
export const MAX_FILTER_DEPTH = 5;
/** Most conditions in one filter, counted over all its groups. */
export const MAX_FILTER_CONDITIONS = 50;
/** Most children of one all or any group, and most values in one `in` list. */
export const MAX_FILTER_LIST_LENGTH = 50;

/** The filter text is not a valid filter. `path` locates the problem inside it, e.g. `all.2.op` ('' is the top). */
export class FilterSpecError extends Error {
  readonly path: string;

  constructor(path: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'FilterSpecError';
    this.path = path;
  }
}

export interface CompiledFilter {
  /** Number of conditions in the filter. */
  readonly conditionCount: number;
  /** Deepest group level (0 for a filter that is a single condition). */
  readonly depth: number;
  /** Whether a body, parsed once with parseStrict by the caller, passes the filter. */
  matches(body: JsonNode): boolean;
}

type FilterNode =
  | { kind: 'all' | 'any'; children: FilterNode[] }
  | { kind: 'not'; child: FilterNode }
  | { kind: 'condition'; tokens: string[]; test: (found: JsonNode | undefined) => boolean };

const GROUP_KEYS = ['all', 'any', 'not'] as const;
const CONDITION_KEYS = ['path', 'op', 'value'] as const;
const COMPARISON_TESTS: Readonly<Record<'gt' | 'gte' | 'lt' | 'lte', (order: -1 | 0 | 1) => boolean>> = {
  gt: (order) => order > 0,
  gte: (order) => order >= 0,
  lt: (order) => order < 0,
  lte: (order) => order <= 0,
};

/** Parses and validates filter text; throws FilterSpecError when it is not valid JSON or not a valid filter. */
export function compileFilter(source: string): CompiledFilter {
  const compiler = new FilterCompiler();
  const root = compiler.compileNode(parseFilterSource(source), '', 0);
  return {
    conditionCount: compiler.conditionCount,
    depth: compiler.depth,
    matches: (body) => nodeMatches(root, body),
  };
}

function parseFilterSource(source: string): JsonNode {
  try {
    return parseStrict(source);
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      throw new FilterSpecError('', `the filter is not valid JSON: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

function nodeMatches(node: FilterNode, body: JsonNode): boolean {
  switch (node.kind) {
    case 'all':
      return node.children.every((child) => nodeMatches(child, body));
    case 'any':
      return node.children.some((child) => nodeMatches(child, body));
    case 'not':
      return !nodeMatches(node.child, body);
    case 'condition':
      return node.test(resolvePointer(body, node.tokens));
  }
}

class FilterCompiler {
  conditionCount = 0;
  depth = 0;

  /** `level` is the number of groups around `node`; recursion is bounded by MAX_FILTER_DEPTH. */
  compileNode(node: JsonNode, location: string, level: number): FilterNode {
    if (node.kind !== 'object' || node.members.length === 0) {
      const found = node.kind === 'object' ? 'an empty object' : `a ${jsonKindName(node)}`;
      throw new FilterSpecError(
        location,
        `expected a condition {path, op, value} or a group {all: [...]}, {any: [...]} or {not: {...}}, got ${found}`,
      );
    }
    const groupKeys = node.members.map((member) => member.key).filter(isGroupKey);
    if (groupKeys.length === 0) return this.compileCondition(node, location);
    if (groupKeys.length > 1) {
      throw new FilterSpecError(location, `a group has exactly one of all, any and not; found ${groupKeys.join(', ')}`);
    }
    const groupKey = groupKeys[0]!;
    const extra = node.members.find((member) => member.key !== groupKey);
    if (extra !== undefined) {
      throw new FilterSpecError(
        childLocation(location, extra.key),
        `unknown key ${JSON.stringify(extra.key)}: a group has only its ${groupKey} key`,
      );
    }
    const groupLevel = level + 1;
    if (groupLevel > MAX_FILTER_DEPTH) {
      throw new FilterSpecError(location, `groups nest at most ${MAX_FILTER_DEPTH} levels deep`);
    }
    this.depth = Math.max(this.depth, groupLevel);
    const argument = node.members[0]!.value;
    const argumentLocation = childLocation(location, groupKey);
    if (groupKey === 'not') return { kind: 'not', child: this.compileNode(argument, argumentLocation, groupLevel) };
    if (argument.kind !== 'array' || argument.items.length === 0 || argument.items.length > MAX_FILTER_LIST_LENGTH) {
      throw new FilterSpecError(
        argumentLocation,
        `${groupKey} takes an array of 1 to ${MAX_FILTER_LIST_LENGTH} filters`,
      );
    }
    const children = argument.items.map((item, index) =>
      this.compileNode(item, childLocation(argumentLocation, index), groupLevel),
    );
    return { kind: groupKey, children };
  }

  private compileCondition(node: JsonObjectNode, location: string): FilterNode {
    const unknown = node.members.find((member) => !(CONDITION_KEYS as readonly string[]).includes(member.key));
    if (unknown !== undefined) {
      throw new FilterSpecError(
        childLocation(location, unknown.key),
        `unknown key ${JSON.stringify(unknown.key)}: a condition has exactly path, op and value`,
      );
    }
    const members = membersByKey(node);
    for (const key of CONDITION_KEYS) {
      if (!members.has(key)) throw new FilterSpecError(childLocation(location, key), `a condition needs ${key}`);
    }
    this.conditionCount++;
    if (this.conditionCount > MAX_FILTER_CONDITIONS) {
      throw new FilterSpecError(location, `a filter has at most ${MAX_FILTER_CONDITIONS} conditions`);
    }
    const tokens = readPointer(members.get('path')!, childLocation(location, 'path'));
    const op = readOperator(members.get('op')!, childLocation(location, 'op'));
    const test = conditionTest(op, members.get('value')!, childLocation(location, 'value'));
    return { kind: 'condition', tokens, test };
  }
}

function isGroupKey(key: string): key is (typeof GROUP_KEYS)[number] {
  return (GROUP_KEYS as readonly string[]).includes(key);
}

function readPointer(node: JsonNode, location: string): string[] {
  if (node.kind !== 'string') {
    throw new FilterSpecError(location, `path must be a JSON Pointer string, got a ${jsonKindName(node)}`);
  }
  const tokens = parsePointer(node.value);
  if (tokens === null) {
    throw new FilterSpecError(
      location,
      `${JSON.stringify(node.value)} is not a JSON Pointer: use '' or '/'-separated tokens with ~ written as ~0 and / as ~1`,
    );
  }
  return tokens;
}

function readOperator(node: JsonNode, location: string): FilterOperator {
  const operator = FILTER_OPERATORS.find((candidate) => node.kind === 'string' && node.value === candidate);
  if (operator === undefined) {
    const found = node.kind === 'string' ? JSON.stringify(node.value) : `a ${jsonKindName(node)}`;
    throw new FilterSpecError(location, `op must be one of ${FILTER_OPERATORS.join(', ')}; got ${found}`);
  }
  return operator;
}

/** Checks `value` against what `op` accepts and returns the test of the value found at the condition's path. */
function conditionTest(
  op: FilterOperator,
  value: JsonNode,
  location: string,
): (found: JsonNode | undefined) => boolean {
  const refuse = (expected: string): never => {
    throw new FilterSpecError(location, `${op} takes ${expected}, got a ${jsonKindName(value)}`);
  };
  switch (op) {
    case 'eq':
      return (found) => found !== undefined && jsonNodesEqual(found, value);
    case 'ne':
      return (found) => found !== undefined && !jsonNodesEqual(found, value);
    case 'in': {
      if (value.kind !== 'array') return refuse(`an array of 1 to ${MAX_FILTER_LIST_LENGTH} values`);
      return inTest(value, location);
    }
    case 'exists': {
      if (value.kind !== 'true' && value.kind !== 'false') return refuse('true or false');
      const wanted = value.kind === 'true';
      return (found) => (found !== undefined) === wanted;
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (value.kind !== 'number' && value.kind !== 'string') return refuse('a number or a string');
      const accepts = COMPARISON_TESTS[op];
      return (found) => {
        const order = compareSameKind(found, value);
        return order !== undefined && accepts(order);
      };
    }
    case 'prefix': {
      if (value.kind !== 'string') return refuse('a string');
      return (found) => found?.kind === 'string' && startsWithCodePoints(found.value, value.value);
    }
  }
}

function inTest(list: JsonArrayNode, location: string): (found: JsonNode | undefined) => boolean {
  if (list.items.length === 0 || list.items.length > MAX_FILTER_LIST_LENGTH) {
    throw new FilterSpecError(
      location,
      `in takes an array of 1 to ${MAX_FILTER_LIST_LENGTH} values, got ${list.items.length}`,
    );
  }
  return (found) => found !== undefined && list.items.some((item) => jsonNodesEqual(found, item));
}

/** Order of `found` against `value` when both are numbers or both strings; undefined otherwise. */
function compareSameKind(found: JsonNode | undefined, value: JsonNode): -1 | 0 | 1 | undefined {
  if (found?.kind === 'number' && value.kind === 'number') return compareJsonNumbers(found.raw, value.raw);
  if (found?.kind === 'string' && value.kind === 'string') return compareCodePoints(found.value, value.value);
  return undefined;
}
