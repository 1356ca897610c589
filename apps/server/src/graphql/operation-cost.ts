import {
  getNamedType,
  type ArgumentNode,
  isObjectType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { DEFAULT_LIMIT, MAX_LIMIT, ServiceError } from '@svc/core';

/** The cost rules of one GraphQL operation (docs/api-choices.md, "GraphQL: cost, limits, idempotency and errors"). */
export const COST_RULES = {
  /** The most rows one operation may read, counted before anything runs. */
  budget: 20_000,
  /** Rows one rate-limit token pays for: a full page (`first: 200`) costs what a REST GET of a page costs. */
  rowsPerToken: MAX_LIMIT,
} as const;

/** The arguments that size a page of a list; a field with one of them is a list the cost multiplies down. */
const PAGE_ARGUMENTS = ['first', 'last'] as const;

export interface OperationCost {
  /** The most rows the operation can read: page sizes multiplied down the nesting, summed over every list. */
  rows: number;
  /** Rate-limit tokens of each root field that runs a resolver (introspection is free), in document order. */
  rootTokens: number[];
  /** Rows below the root fields (what a mutation's answer reads). */
  nestedRows: number;
}

/**
 * Measures what an operation can read before anything runs. A root field reads one row, or its page when it takes
 * `first`; a field below it that takes `first` (a list loaded per parent, such as `Message.deliveries`) reads its
 * page for every row of the list it is in, so page sizes multiply down the nesting:
 * `messages(first: 100) { nodes { deliveries(first: 50) { nodes { attempts(first: 50) { ... } } } } }` can read
 * 100 + 100 × 50 + 100 × 50 × 50 = 255,100 rows. A page size is the literal or variable value (clamped to 1-200, what
 * the list accepts), else the argument's default in the schema, else the lists' default of 50. Fragments are
 * measured once each and scaled; `@skip` and `@include` are not evaluated.
 */
export function measureCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Readonly<Record<string, unknown>> = {},
): OperationCost {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const variableDefaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? [])
    if (definition.defaultValue)
      variableDefaults.set(definition.variable.name.value, valueFromASTUntyped(definition.defaultValue));

  const pageSize = (field: GraphQLField<unknown, unknown>, args: readonly ArgumentNode[]) => {
    const declared = field.args.find((arg) => (PAGE_ARGUMENTS as readonly string[]).includes(arg.name));
    if (!declared) return null;
    const written = args.find((arg) => arg.name.value === declared.name)?.value;
    let value: unknown = undefined;
    if (written?.kind === Kind.VARIABLE) {
      const name = written.name.value;
      value = name in variables ? variables[name] : variableDefaults.get(name);
    } else if (written) value = valueFromASTUntyped(written);
    if (typeof value !== 'number' || !Number.isInteger(value))
      value = typeof declared.defaultValue === 'number' ? declared.defaultValue : DEFAULT_LIMIT;
    return Math.min(Math.max(1, value as number), MAX_LIMIT);
  };

  // Rows of a selection set read for one row of its parent list; linear in that count, so fragments scale.
  const measuredFragments = new Map<string, number>();
  const rowsOf = (selectionSet: SelectionSetNode, type: GraphQLObjectType, seen: ReadonlySet<string>): number => {
    let rows = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = type.getFields()[selection.name.value];
        if (!field) continue;
        const page = pageSize(field, selection.arguments ?? []);
        const child = getNamedType(field.type);
        const inner = selection.selectionSet && isObjectType(child) ? rowsOf(selection.selectionSet, child, seen) : 0;
        rows += page === null ? inner : page + page * inner;
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (isObjectType(condition)) rows += rowsOf(selection.selectionSet, condition, seen);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Unknown and cyclic spreads are refused by GraphQL validation before this runs; stay safe anyway.
        if (!fragment || seen.has(name)) continue;
        let inner = measuredFragments.get(name);
        if (inner === undefined) {
          const condition = schema.getType(fragment.typeCondition.name.value);
          inner = isObjectType(condition) ? rowsOf(fragment.selectionSet, condition, new Set([...seen, name])) : 0;
          measuredFragments.set(name, inner);
        }
        rows += inner;
      }
    }
    return rows;
  };

  const root = schema.getRootType(operation.operation);
  const rootTokens: number[] = [];
  let rows = 0;
  let nestedRows = 0;
  // Root fields one by one (each is charged on its own); fragments at the root are expanded to their fields.
  const visitRoot = (selectionSet: SelectionSetNode, seen: ReadonlySet<string>) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = root?.getFields()[selection.name.value];
        if (!root || !field || selection.name.value.startsWith('__')) continue;
        const page = pageSize(field, selection.arguments ?? []) ?? 1;
        const child = getNamedType(field.type);
        const inner =
          selection.selectionSet && isObjectType(child) ? page * rowsOf(selection.selectionSet, child, new Set()) : 0;
        rows += page + inner;
        nestedRows += inner;
        rootTokens.push(Math.max(1, Math.ceil((page + inner) / COST_RULES.rowsPerToken)));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        visitRoot(selection.selectionSet, seen);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (fragment && !seen.has(fragment.name.value))
          visitRoot(fragment.selectionSet, new Set([...seen, fragment.name.value]));
      }
    }
  };
  visitRoot(operation.selectionSet, new Set());
  return { rows, rootTokens, nestedRows };
}

/** Refuses an operation over the budget with 422 invalid_field (field `query`), before authentication. */
export function checkCostBudget(cost: OperationCost): void {
  if (cost.rows > COST_RULES.budget)
    throw new ServiceError(
      'invalid_field',
      `the operation can read up to ${cost.rows.toLocaleString('en-US')} rows (page sizes multiplied down the ` +
        `nesting); the budget is ${COST_RULES.budget.toLocaleString('en-US')} rows per request: ask for smaller ` +
        'pages or fewer nested lists',
      { field: 'query' },
    );
}

/** Tokens by bucket: a query reads (each root field pays its rows); a mutation pays its writes and reads apart. */
export function tokensOf(cost: OperationCost, kind: 'query' | 'mutation' | 'subscription') {
  if (kind !== 'mutation') return { own: cost.rootTokens.reduce((sum, tokens) => sum + tokens, 0), read: 0 };
  return { own: cost.rootTokens.length, read: Math.ceil(cost.nestedRows / COST_RULES.rowsPerToken) };
}
