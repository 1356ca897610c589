import { GraphQLError, Lexer, Source, TokenKind, type Token } from 'graphql';
import { ServiceError } from '@svc/core';

/**
 * What a GraphQL document may be before it is parsed and validated (docs/api-choices.md, "GraphQL: cost, limits,
 * idempotency and errors"). /graphql is public (sign-in, portal links), so these bound what anyone can make the
 * server do: one pass of graphql-js's lexer over at most `bytes` and `tokens`, no parse, no validation. The
 * console's largest document (the standard introspection query) has 2 KiB, 183 tokens, 10 levels and 3 fragments.
 */
export const DOCUMENT_LIMITS = {
  /** The document's UTF-8 bytes; large values belong in variables. */
  bytes: 32_768,
  /** Lexical tokens (punctuators, names, values), as graphql-js's `parse(..., { maxTokens })` counts them. */
  tokens: 2_000,
  /** Brackets of any kind open at once: selection sets, arguments, lists and objects. */
  nesting: 32,
  /** Selections of one selection set as written (fields, fragment spreads, inline fragments). */
  selections: 50,
  /** Aliases in the whole document. */
  aliases: 100,
  /** Fragment definitions. */
  fragments: 20,
  /** Levels of selection sets of an operation with its fragments expanded in place. */
  depth: 32,
  /** Selections of an operation with its fragments expanded (each spread counts its fragment again). */
  expandedSelections: 5_000,
  /** Milliseconds of CPU graphql-js may spend validating one document (validation-budget.ts). */
  validationMs: 100,
} as const;

/** What the lexer pass found (for the tests and the benchmark). */
export interface DocumentShape {
  bytes: number;
  tokens: number;
  nesting: number;
  aliases: number;
  fragments: number;
  depth: number;
  expandedSelections: number;
}

/** One fragment or operation as the lexer pass saw it. */
interface Definition {
  /** Deepest selection set, counted from the definition's own (1). */
  depth: number;
  /** Selections written in it. */
  selections: number;
  /** Fragments it spreads, with the selection level the spread stands at. */
  spreads: { fragment: string; level: number }[];
}

type FrameKind = 'selections' | 'value';

interface Frame {
  kind: FrameKind;
  /** Selections so far (selection sets only). */
  selections: number;
  /** The last two tokens read at this level, to tell a field from an alias target, a directive or a type condition. */
  previous: Token | null;
  beforePrevious: Token | null;
}

const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.PAREN_L, TokenKind.BRACKET_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.PAREN_R, TokenKind.BRACKET_R]);
const OPERATION_KEYWORDS = new Set(['query', 'mutation', 'subscription']);

/** 422 invalid_field (field `query`) naming the limit the document passed. */
function documentLimitError(what: string, found: number | string, limit: number): ServiceError {
  const count = typeof found === 'number' ? found.toLocaleString('en-US') : found;
  return new ServiceError(
    'invalid_field',
    `the document has ${count} ${what}; at most ${limit.toLocaleString('en-US')} are allowed`,
    { field: 'query' },
  );
}

/** A definition starts at the beginning and after the closing brace of the one before. */
const startsDefinition = (previous: Token | null) => previous === null || previous.kind === TokenKind.BRACE_R;

const isName = (token: Token | null, value?: string) =>
  token?.kind === TokenKind.NAME && (value === undefined || token.value === value);

/**
 * Measures a document with one pass of the lexer and refuses it (422 invalid_field, field `query`, naming the limit)
 * over any of DOCUMENT_LIMITS, before graphql-js parses it. The pass stops at the first limit passed, so its cost is
 * bounded by the limits, not by the document. A document the lexer cannot read is left to the parser, which refuses
 * it at the same place with its syntax error.
 */
export function checkDocumentLimits(query: string): DocumentShape {
  const bytes = Buffer.byteLength(query, 'utf8');
  if (bytes > DOCUMENT_LIMITS.bytes) throw documentLimitError('bytes', bytes, DOCUMENT_LIMITS.bytes);
  const shape: DocumentShape = {
    bytes,
    tokens: 0,
    nesting: 0,
    aliases: 0,
    fragments: 0,
    depth: 0,
    expandedSelections: 0,
  };
  const fragments = new Map<string, Definition>();
  const operations: Definition[] = [];
  const stack: Frame[] = [];
  let selectionLevel = 0;
  // The definition being read, and the tokens read at the document's top level (outside every bracket).
  let current: Definition | null = null;
  let topPrevious: Token | null = null;
  let topBeforePrevious: Token | null = null;

  const lexer = new Lexer(new Source(query));
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      shape.tokens += 1;
      if (shape.tokens > DOCUMENT_LIMITS.tokens)
        throw documentLimitError(
          'tokens',
          `more than ${DOCUMENT_LIMITS.tokens.toLocaleString('en-US')}`,
          DOCUMENT_LIMITS.tokens,
        );
      const frame = stack.at(-1);
      if (!frame) {
        const starts = startsDefinition(topPrevious);
        if (starts && (isName(token, 'fragment') || (isName(token) && OPERATION_KEYWORDS.has(token.value)))) {
          current = { depth: 0, selections: 0, spreads: [] };
          if (token.value !== 'fragment') operations.push(current);
          else if ((shape.fragments += 1) > DOCUMENT_LIMITS.fragments)
            throw documentLimitError('fragment definitions', shape.fragments, DOCUMENT_LIMITS.fragments);
        } else if (starts && token.kind === TokenKind.BRACE_L) {
          current = { depth: 0, selections: 0, spreads: [] };
          operations.push(current);
        } else if (isName(token) && isName(topPrevious, 'fragment') && startsDefinition(topBeforePrevious) && current)
          fragments.set(token.value, current);
        topBeforePrevious = topPrevious;
        topPrevious = token;
      } else if (frame.kind === 'selections') {
        readSelectionToken(frame, token);
      }

      if (OPENING.has(token.kind)) {
        const selections = token.kind === TokenKind.BRACE_L && (!frame || frame.kind === 'selections');
        stack.push({ kind: selections ? 'selections' : 'value', selections: 0, previous: null, beforePrevious: null });
        if (stack.length > DOCUMENT_LIMITS.nesting)
          throw documentLimitError('levels of nested brackets', stack.length, DOCUMENT_LIMITS.nesting);
        shape.nesting = Math.max(shape.nesting, stack.length);
        if (selections) {
          selectionLevel += 1;
          if (current) current.depth = Math.max(current.depth, selectionLevel);
        }
      } else if (CLOSING.has(token.kind)) {
        const closed = stack.pop();
        // An unbalanced closing bracket: the parser refuses the document there.
        if (!closed) break;
        if (closed.kind === 'selections') selectionLevel -= 1;
        const parent = stack.at(-1);
        if (parent) {
          parent.beforePrevious = parent.previous;
          parent.previous = token;
        } else {
          topBeforePrevious = topPrevious;
          topPrevious = token;
        }
      }
    }
  } catch (error) {
    // The parser reports what the lexer could not read, as a syntax error.
    if (!(error instanceof GraphQLError)) throw error;
  }

  function readSelectionToken(frame: Frame, token: Token): void {
    const { previous, beforePrevious } = frame;
    if (token.kind === TokenKind.SPREAD) countSelection(frame);
    else if (token.kind === TokenKind.COLON) {
      if ((shape.aliases += 1) > DOCUMENT_LIMITS.aliases)
        throw documentLimitError('aliases', shape.aliases, DOCUMENT_LIMITS.aliases);
    } else if (token.kind === TokenKind.NAME) {
      const spreadName = previous?.kind === TokenKind.SPREAD;
      const typeCondition = isName(previous, 'on') && beforePrevious?.kind === TokenKind.SPREAD;
      const aliasTarget = previous?.kind === TokenKind.COLON;
      const directive = previous?.kind === TokenKind.AT;
      if (spreadName && token.value !== 'on') current?.spreads.push({ fragment: token.value, level: selectionLevel });
      if (!spreadName && !typeCondition && !aliasTarget && !directive) countSelection(frame);
    }
    frame.beforePrevious = previous;
    frame.previous = token;
  }

  function countSelection(frame: Frame): void {
    frame.selections += 1;
    if (current) current.selections += 1;
    if (frame.selections > DOCUMENT_LIMITS.selections)
      throw documentLimitError('selections in one selection set', frame.selections, DOCUMENT_LIMITS.selections);
  }

  measureExpanded(shape, operations, fragments);
  return shape;
}

/**
 * Depth and selections of each operation with its fragments expanded, each fragment measured once (at most
 * DOCUMENT_LIMITS.fragments of them). Unknown fragments and cycles are left to validation, which refuses them.
 */
function measureExpanded(shape: DocumentShape, operations: Definition[], fragments: Map<string, Definition>): void {
  const measured = new Map<Definition, { depth: number; selections: number }>();
  const visiting = new Set<Definition>();
  const expand = (definition: Definition): { depth: number; selections: number } => {
    const known = measured.get(definition);
    if (known) return known;
    visiting.add(definition);
    let depth = definition.depth;
    let selections = definition.selections;
    for (const spread of definition.spreads) {
      const fragment = fragments.get(spread.fragment);
      if (!fragment || visiting.has(fragment)) continue;
      const inner = expand(fragment);
      // The fragment's own selection set stands where the spread is.
      depth = Math.max(depth, spread.level - 1 + inner.depth);
      selections = Math.min(selections + inner.selections, Number.MAX_SAFE_INTEGER);
    }
    visiting.delete(definition);
    const result = { depth, selections };
    measured.set(definition, result);
    return result;
  };
  for (const operation of operations) {
    const { depth, selections } = expand(operation);
    shape.depth = Math.max(shape.depth, depth);
    shape.expandedSelections = Math.max(shape.expandedSelections, selections);
  }
  if (shape.depth > DOCUMENT_LIMITS.depth)
    throw documentLimitError('levels of selections (fragments expanded)', shape.depth, DOCUMENT_LIMITS.depth);
  if (shape.expandedSelections > DOCUMENT_LIMITS.expandedSelections)
    throw documentLimitError(
      'selections in one operation (fragments expanded)',
      shape.expandedSelections,
      DOCUMENT_LIMITS.expandedSelections,
    );
}
