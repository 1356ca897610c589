// Shared by the filter and transform compilers, which read specs given as JSON text and report errors by location.
import type { JsonNode, JsonObjectNode } from './node.js';

/** The dotted location of a child: `all.2.op`, `fields.0.from`; the top is ''. */
export function childLocation(location: string, segment: string | number): string {
  return location === '' ? String(segment) : `${location}.${segment}`;
}

/** The JSON type of a node as a user would name it in an error message. */
export function jsonKindName(node: JsonNode): string {
  return node.kind === 'true' || node.kind === 'false' ? 'boolean' : node.kind;
}

/** Members by decoded key; the strict parser has already refused duplicate keys. */
export function membersByKey(node: JsonObjectNode): Map<string, JsonNode> {
  return new Map(node.members.map((member) => [member.key, member.value]));
}
