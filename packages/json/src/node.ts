/** A parsed JSON value with its UTF-16 span [start, end) in the source text. */
export type JsonNode =
  | { kind: 'object'; start: number; end: number; members: JsonMember[] }
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'string'; start: number; end: number; value: string }
  | { kind: 'number'; start: number; end: number; raw: string }
  | { kind: 'true' | 'false' | 'null'; start: number; end: number };

export interface JsonMember {
  key: string;
  keyStart: number;
  keyEnd: number;
  value: JsonNode;
}

export type JsonObjectNode = Extract<JsonNode, { kind: 'object' }>;
export type JsonArrayNode = Extract<JsonNode, { kind: 'array' }>;
export type JsonContainerNode = JsonObjectNode | JsonArrayNode;

export function isContainer(node: JsonNode): node is JsonContainerNode {
  return node.kind === 'object' || node.kind === 'array';
}
