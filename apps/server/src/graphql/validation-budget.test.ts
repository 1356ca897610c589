import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, specifiedRules, validate, type ValidationRule } from 'graphql';
import { startHarness, type Harness } from '../testing/harness.js';
import { documentsAtTheLimits } from '../testing/hostile-graphql.js';
import { formatGraphqlError } from './errors.js';
import { buildGraphqlSchema } from './schema.js';
import { graphqlClient } from './test-client.js';
import { threadCpuMs, validationBudgetRule } from './validation-budget.js';

/**
 * A rule that, at the first node, keeps validation from going on: waiting `ms` of the wall clock (no CPU), or spinning
 * until the thread has spent `ms` of CPU (on a loaded machine that takes longer).
 */
function stallRule(ms: number, how: 'wait' | 'spin'): ValidationRule {
  return () => {
    let stalled = false;
    return {
      enter() {
        if (stalled) return;
        stalled = true;
        if (how === 'wait') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
        else for (const until = threadCpuMs() + ms; threadCpuMs() < until;);
      },
    };
  };
}

const DOCUMENT = `{ ${Array.from({ length: 20 }, () => 'viewer { teamId }').join(' ')} }`;

describe('the validation budget counts the CPU a document costs, on the real clock', () => {
  it("reads the thread's CPU to the microsecond, not at the kernel's ticks (4 ms apart)", () => {
    // Read in a loop until the thread has run 20 ms (its own CPU, so a loaded machine only makes it take longer): at
    // the ticks alone the reading moves about ten times (once per tick and context switch), and a 5 ms document could
    // read as 1 ms against a 2 ms budget (a CI run saw it).
    const readings = new Set<number>();
    for (let now = threadCpuMs(), until = now + 20; now < until; now = threadCpuMs()) readings.add(now);
    expect(readings.size).toBeGreaterThan(200);
  });

  it('lets a document through that waited for a CPU longer than the budget (a loaded machine)', async () => {
    const schema = await buildGraphqlSchema();
    const started = performance.now();
    const errors = validate(schema, parse(DOCUMENT), [
      ...specifiedRules,
      validationBudgetRule(50),
      stallRule(150, 'wait'),
    ]);
    // The wall clock passed the budget three times over; the thread spent almost none of it.
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(errors).toEqual([]);
  });

  it('stops a document that spends the budget, with the refusal naming it and no exception', async () => {
    const schema = await buildGraphqlSchema();
    const errors = validate(schema, parse(DOCUMENT), [
      ...specifiedRules,
      validationBudgetRule(50),
      stallRule(80, 'spin'),
    ]);
    const formatted = errors.map((error) =>
      formatGraphqlError({ message: error.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }, error, () => {
        throw new Error('logged as unexpected');
      }),
    );
    expect(formatted).toEqual([
      {
        message:
          'the document took more than 50 ms of CPU to validate, the most one document may take: make it smaller or ' +
          'simpler',
        extensions: { code: 'invalid_field', field: 'query' },
      },
      {
        message: expect.stringMatching(/^the document is too complex to validate: validation stopped at its budget/),
        extensions: { code: 'invalid_field', field: 'query' },
      },
    ]);
  });
});

describe('a document past the budget, over HTTP', () => {
  let h: Harness;
  let gql: ReturnType<typeof graphqlClient>;
  beforeAll(async () => {
    // A budget the worst documents within the limits pass (5 to 15 ms of CPU) and a small one does not.
    h = await startHarness({ graphqlValidationMs: 2, captureLogs: true });
    gql = graphqlClient(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it('is answered invalid_field naming the budget, where it answered 500 internal_error', async () => {
    const heavy = documentsAtTheLimits().find((document) => document.name === 'nested lists repeated (limits)')!;
    const answer = await gql(heavy.query, {}, { key: null });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      {
        message: expect.stringMatching(/^the document took more than 2 ms of CPU to validate/),
        extensions: { code: 'invalid_field', field: 'query' },
      },
      {
        message: expect.stringMatching(/^the document is too complex to validate/),
        extensions: { code: 'invalid_field', field: 'query' },
      },
    ]);
    expect(h.logs.join('\n')).not.toMatch(/Unexpected error processing request|graphql error/);
    // A small document passes the same budget. 2 ms of CPU is tight enough that a garbage collection on the thread
    // can spend it (a loaded CI run saw one): of five tries, one passing says the budget is not what refuses it,
    // and each refusal must be the budget's, never another error.
    const tries: { status: number; body: unknown }[] = [];
    for (let i = 0; i < 5 && !tries.some((t) => t.status === 200); i += 1) {
      const small = await gql('{ __typename }', {}, { key: null });
      tries.push({ status: small.status, body: small.body });
    }
    expect(tries.at(-1)).toEqual({ status: 200, body: { data: { __typename: 'Query' } } });
    // A refusal may carry both of the budget's errors (the CPU one, and the complexity rule stopping at the same spent
    // budget), as the heavy document's does: each of them the budget's.
    for (const refused of tries.slice(0, -1)) {
      expect(refused.status).toBe(400);
      const errors = (refused.body as { errors: { message: string; extensions: unknown }[] }).errors;
      expect(errors.length).toBeGreaterThan(0);
      for (const error of errors) {
        expect(error.extensions).toEqual({ code: 'invalid_field', field: 'query' });
        expect(error.message).toMatch(/^the document (took more than 2 ms of CPU|is too complex) to validate/);
      }
    }
  });
});
