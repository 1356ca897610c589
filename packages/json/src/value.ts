import type { JsonContainerNode, JsonNode } from './node.js';
import { isContainer } from './node.js';

type JsonContainerValue = Record<string, unknown> | unknown[];

interface PendingContainer {
  node: JsonContainerNode;
  target: JsonContainerValue;
  nextIndex: number;
}

/**
 * The plain JS value a node denotes, shaped as JSON.parse would build it (numbers are Number(raw)). Works with an
 * explicit stack so any depth the parser accepted converts without overflowing the call stack.
 */
export function toValue(node: JsonNode): unknown {
  if (!isContainer(node)) return scalarValue(node);
  const root = emptyContainerValue(node);
  const pending: PendingContainer[] = [{ node, target: root, nextIndex: 0 }];
  while (pending.length > 0) {
    const top = pending[pending.length - 1]!;
    const child = childAt(top.node, top.nextIndex);
    if (child === undefined) {
      pending.pop();
      continue;
    }
    const key = child.key ?? top.nextIndex;
    top.nextIndex++;
    if (isContainer(child.node)) {
      const target = emptyContainerValue(child.node);
      setOwn(top.target, key, target);
      pending.push({ node: child.node, target, nextIndex: 0 });
    } else {
      setOwn(top.target, key, scalarValue(child.node));
    }
  }
  return root;
}

function childAt(node: JsonContainerNode, index: number): { key?: string; node: JsonNode } | undefined {
  if (node.kind === 'array') {
    const item = node.items[index];
    return item && { node: item };
  }
  const member = node.members[index];
  return member && { key: member.key, node: member.value };
}

function emptyContainerValue(node: JsonContainerNode): JsonContainerValue {
  return node.kind === 'array' ? [] : {};
}

// Plain assignment of "__proto__" would replace the prototype instead of adding a key; defining the property
// matches JSON.parse and cannot reach Object.prototype.
function setOwn(target: JsonContainerValue, key: string | number, value: unknown): void {
  if (Array.isArray(target)) target.push(value);
  else if (key === '__proto__') {
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  } else target[key] = value;
}

function scalarValue(node: Exclude<JsonNode, JsonContainerNode>): unknown {
  switch (node.kind) {
    case 'string':
      return node.value;
    case 'number':
      return Number(node.raw);
    case 'true':
      return true;
    case 'false':
      return false;
    case 'null':
      return null;
  }
}
