import type { JsonNode } from './node.js';

const INVALID_ESCAPE = /~(?![01])/;
const CANONICAL_INDEX = /^(?:0|[1-9][0-9]*)$/;

/**
 * An RFC 6901 JSON Pointer as a regular expression, for schemas that publish a `pattern`. Unambiguous, so it runs in
 * linear time: a token character is neither `/` nor `~`, and `~` is always followed by 0 or 1 (`[^~]` in place of
 * `[^~/]` let `/` be matched two ways and backtracked exponentially on `///...~`).
 */
export const JSON_POINTER_PATTERN = /^(?:\/(?:[^~/]|~[01])*)*$/;

/** RFC 6901 pointer to its reference tokens: '' is the whole document; null when the pointer is malformed. */
export function parsePointer(pointer: string): string[] | null {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || INVALID_ESCAPE.test(pointer)) return null;
  // ~1 before ~0, so "~01" decodes to "~1" and not "/".
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** Builds the RFC 6901 pointer for a list of reference tokens (the inverse of parsePointer). */
export function formatPointer(tokens: readonly string[]): string {
  return tokens.map((token) => '/' + token.replaceAll('~', '~0').replaceAll('/', '~1')).join('');
}

/**
 * The node a pointer refers to, or undefined when it is malformed or names nothing. Array tokens must be canonical
 * decimal indexes ('0', '12'); '01' and '-' (past the end) name nothing.
 */
export function resolvePointer(node: JsonNode, pointer: string | string[]): JsonNode | undefined {
  const tokens = typeof pointer === 'string' ? parsePointer(pointer) : pointer;
  if (tokens === null) return undefined;
  let current: JsonNode | undefined = node;
  for (const token of tokens) {
    current = childByToken(current, token);
    if (current === undefined) return undefined;
  }
  return current;
}

function childByToken(node: JsonNode, token: string): JsonNode | undefined {
  if (node.kind === 'object') return node.members.find((member) => member.key === token)?.value;
  if (node.kind === 'array') return CANONICAL_INDEX.test(token) ? node.items[Number(token)] : undefined;
  return undefined;
}
