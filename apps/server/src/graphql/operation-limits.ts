import {
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { ServiceError } from '@svc/core';

/** The most one GraphQL operation may ask for (docs/api-choices.md, "GraphQL: cost and limits"). */
export const OPERATION_LIMITS = {
  /** Root fields (after expanding fragments; every alias counts). What they cost is in operation-cost.ts. */
  rootFields: 20,
  /** Aliased fields anywhere in the operation. */
  aliases: 30,
  /** Nested field levels; a root field is level 1. Introspection (`__schema`, `__type`) is not counted. */
  depth: 8,
} as const;

export interface OperationShape {
  /** The names of the root fields (not their aliases). */
  rootFieldNames: ReadonlySet<string>;
  /** Root field selections, every alias and fragment spread counted. */
  rootFields: number;
  aliases: number;
  depth: number;
}

interface SelectionSetShape {
  /** Fields at this level. */
  fields: number;
  names: Set<string>;
  aliases: number;
  depth: number;
}

const isIntrospection = (name: string) => name.startsWith('__');

/**
 * Measures the operation as written, before anything runs. Fragments are measured once each, so a document
 * that spreads fragments into each other many times cannot make this slow. `@skip` and `@include` are not
 * evaluated: a field counts if it is written.
 */
export function measureOperation(document: DocumentNode, operation: OperationDefinitionNode): OperationShape {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const measured = new Map<string, SelectionSetShape>();

  const measure = (selectionSet: SelectionSetNode, seen: ReadonlySet<string>): SelectionSetShape => {
    const shape: SelectionSetShape = { fields: 0, names: new Set(), aliases: 0, depth: 0 };
    const add = (inner: SelectionSetShape) => {
      shape.fields += inner.fields;
      for (const name of inner.names) shape.names.add(name);
      shape.aliases += inner.aliases;
      shape.depth = Math.max(shape.depth, inner.depth);
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        shape.fields += 1;
        shape.names.add(name);
        if (selection.alias) shape.aliases += 1;
        const child = selection.selectionSet ? measure(selection.selectionSet, seen) : null;
        if (child) shape.aliases += child.aliases;
        if (!isIntrospection(name)) shape.depth = Math.max(shape.depth, 1 + (child?.depth ?? 0));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        add(measure(selection.selectionSet, seen));
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Unknown and cyclic spreads are refused by GraphQL validation before this runs; stay safe anyway.
        if (!fragment || seen.has(name)) continue;
        let inner = measured.get(name);
        if (!inner) {
          inner = measure(fragment.selectionSet, new Set([...seen, name]));
          measured.set(name, inner);
        }
        add(inner);
      }
    }
    return shape;
  };

  const root = measure(operation.selectionSet, new Set());
  return {
    rootFieldNames: root.names,
    rootFields: root.fields,
    aliases: root.aliases,
    depth: root.depth,
  };
}

/** Refuses an operation over any limit with 422 invalid_field, before authentication and before any resolver. */
export function checkOperationLimits(shape: OperationShape): void {
  const over = (what: string, count: number, limit: number) =>
    new ServiceError('invalid_field', `the operation has ${count} ${what}; at most ${limit} are allowed`, {
      field: 'query',
    });
  if (shape.rootFields > OPERATION_LIMITS.rootFields)
    throw over('root fields', shape.rootFields, OPERATION_LIMITS.rootFields);
  if (shape.aliases > OPERATION_LIMITS.aliases) throw over('aliases', shape.aliases, OPERATION_LIMITS.aliases);
  if (shape.depth > OPERATION_LIMITS.depth) throw over('levels of nesting', shape.depth, OPERATION_LIMITS.depth);
}
