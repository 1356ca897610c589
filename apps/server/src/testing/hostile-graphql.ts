/**
 * The worst GraphQL documents we know how to build, for the document limits' tests and for
 * scripts/bench-graphql-hostile.ts: each is a document an unauthenticated client may send to /graphql, up to `bytes`
 * long. None needs a key to be parsed and validated.
 */
export interface HostileDocument {
  name: string;
  query: string;
}

/** `unit(i)` repeated until the document would pass `bytes` (UTF-8; every unit here is ASCII). */
function fill(bytes: number, head: string, unit: (i: number) => string, tail: string): string {
  const parts = [head];
  let length = head.length + tail.length;
  for (let i = 0; ; i += 1) {
    const next = unit(i);
    if (length + next.length > bytes) break;
    parts.push(next);
    length += next.length;
  }
  parts.push(tail);
  return parts.join('');
}

/** Fragments `f0 ... f{n-1}`, each made by `body(i)`, as many as fit in `bytes` after `head`. */
function fragments(bytes: number, head: string, body: (i: number) => string): string {
  return fill(bytes, head, (i) => ` fragment f${i} on Query { ${body(i)} }`, '');
}

export function hostileDocuments(bytes: number): HostileDocument[] {
  const links = Math.floor(bytes / ' fragment f00000 on Query { ...f00000 }'.length);
  const chain = (next: (i: number) => string) =>
    `{ ...f0 }${Array.from({ length: links }, (_, i) => ` fragment f${i} on Query { ${next(i)} }`).join('')}`;
  return [
    // One fragment spread again and again (the fuzzer's 1 MiB document).
    {
      name: 'spreads of one fragment',
      query: fill(bytes, '{ ', () => '...f ', '} fragment f on Query { __typename }'),
    },
    // Distinct fragments, all spread at the root: the overlapping-fields check compares them pairwise.
    {
      name: 'distinct fragments spread at the root',
      query: fill(bytes, '{ ...f0 ', (i) => `...f${i + 1} fragment f${i} on Query { viewer { teamId } } `, '}'),
    },
    // The same field over and over: graphql-js compares same-named fields pairwise.
    { name: 'one field repeated', query: fill(bytes, '{ ', () => 'viewer { teamId } ', '}') },
    { name: 'wide aliases', query: fill(bytes, '{ ', (i) => `a${i}: __typename `, '}') },
    // A chain f0 -> f1 -> ... -> fn (4,000 of them gave RangeError: Maximum call stack size exceeded, HTTP 500).
    { name: 'fragment chain', query: chain((i) => (i + 1 < links ? `...f${i + 1}` : '__typename')) },
    {
      name: 'fragment cycle',
      query: chain((i) => `...f${(i + 1) % links}`),
    },
    // Each fragment spreads the next one twice under different fields: 2^n selections once expanded.
    {
      name: 'nested fragments',
      query: fragments(bytes, '{ ...f0 }', (i) => `a: viewer { teamId } b: __typename ...f${i + 1}`),
    },
    // Inline fragments inside inline fragments (the overlapping-fields check flattens them).
    {
      name: 'inline fragments',
      query: fill(
        bytes,
        '{ ',
        (i) => `... on Query { ${'... on Query { viewer { teamId } } '.repeat((i % 50) + 1)}} `,
        '}',
      ),
    },
    { name: 'deep selections', query: `${'{ viewer '.repeat(bytes / 20)}{ teamId }${' }'.repeat(bytes / 20)}` },
    { name: 'deep lists', query: `{ viewer(x: ${'['.repeat(bytes / 3)}1${']'.repeat(bytes / 3)}) { teamId } }` },
    // Unknown fields: an error each, up to graphql-js's error limit.
    { name: 'unknown fields', query: fill(bytes, '{ ', (i) => `u${i} `, '}') },
  ];
}

const NESTED_LISTS = 'messages { nodes { deliveries { nodes { attempts { nodes { id id id id id id id id } } } } } }';

const repeat = (n: number, unit: (i: number) => string) => Array.from({ length: n }, (_, i) => unit(i)).join(' ');

/**
 * The most expensive documents we found that pass every limit of graphql/document-limits.ts (checked by
 * document-limits.test.ts): what an unauthenticated client can still make graphql-js parse and validate.
 */
export function documentsAtTheLimits(): HostileDocument[] {
  const viewer = (fields: number) => `viewer { ${repeat(fields, () => 'teamId')} }`;
  const unknown = (count: number) => repeat(count, (i) => `u${i}`);
  return [
    // 50 identical fields with 30 subfields each: the overlapping-fields check compares every pair.
    { name: 'one field repeated (limits)', query: `{ ${repeat(50, () => viewer(30))} }` },
    // 20 fragments (the most) of one field each, spread side by side: compared pairwise.
    {
      name: 'distinct fragments (limits)',
      query: `{ ${repeat(20, (i) => `...f${i}`)} } ${repeat(20, (i) => `fragment f${i} on Query { ${viewer(48)} }`)}`,
    },
    {
      name: 'distinct deep fragments (limits)',
      query: `{ ${repeat(20, (i) => `...f${i}`)} } ${repeat(20, (i) => `fragment f${i} on Query { ${NESTED_LISTS} }`)}`,
    },
    {
      name: 'inline fragments (limits)',
      query: `{ ${repeat(40, () => `... on Query { ${repeat(4, () => viewer(8))} }`)} }`,
    },
    {
      name: 'nested lists repeated (limits)',
      query: `{ ${repeat(50, () => NESTED_LISTS)} }`,
    },
    // Each fragment spreads the next twice: doubling 9 times stays under 5,000 selections once expanded.
    {
      name: 'nested fragments (limits)',
      query: `{ ...f0 } ${repeat(9, (i) => `fragment f${i} on Query { a: viewer { teamId } ...f${i + 1} b: __typename ... on Query { ...f${i + 1} } }`)} fragment f9 on Query { __typename }`,
    },
    {
      name: 'fragment chain (limits)',
      query: `{ ...f0 } ${repeat(19, (i) => `fragment f${i} on Query { ...f${i + 1} }`)} fragment f19 on Query { __typename }`,
    },
    {
      name: 'fragment cycle (limits)',
      query: `{ ...f0 } ${repeat(20, (i) => `fragment f${i} on Query { ...f${(i + 1) % 20} }`)}`,
    },
    { name: 'deep selections (limits)', query: `${'{ viewer '.repeat(31)}{ teamId }${' }'.repeat(31)}` },
    // 149 unknown fields: graphql-js stops after 100 errors.
    {
      name: 'unknown fields (limits)',
      query: `{ ${unknown(48)} a: viewer { ${unknown(50)} } b: viewer { ${unknown(50)} } }`,
    },
  ];
}
