import { readFileSync } from 'node:fs';
import type { ValidationRule } from 'graphql';
import { validationAbortedError } from 'graphql/validation/validationAbortedError.js';
import { ServiceError } from '@svc/core';
import { toGraphqlError } from './errors.js';

const SCHEDSTAT = '/proc/thread-self/schedstat';

/**
 * CPU time the calling thread has run, in ms: Linux's /proc/thread-self/schedstat (its first field, nanoseconds on a
 * CPU). The kernel brings that field up to date only at its ticks (4 ms apart here) and at context switches, so read
 * alone it lags by up to a tick: a document costing 5 ms could read as 1. process.cpuUsage() first, because the
 * kernel's getrusage() brings the calling thread's runtime up to date before it sums the process's threads; the
 * schedstat read after it is exact to the microsecond. Where schedstat cannot be read, the process's CPU time
 * (process.cpuUsage), which other threads of the process add to. Either stands still while the thread waits for a
 * CPU, as it does on a loaded machine.
 */
function cpuClock(): () => number {
  try {
    readFileSync(SCHEDSTAT, 'utf8');
    return () => {
      process.cpuUsage();
      return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ', 1)[0]) / 1e6;
    };
  } catch {
    return () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    };
  }
}

/** This thread's CPU time in ms (see cpuClock). */
export const threadCpuMs = cpuClock();

/**
 * A validation rule that stops graphql-js once it has spent `budgetMs` of CPU on a document (the CPU of the thread,
 * not the wall clock: on a loaded machine a document waits for a CPU without spending any, and a legitimate document
 * must not be refused for that). It is checked at every node, so the work of one node (the overlapping-fields check
 * of one selection set, bounded by the document limits and graphql-js's own comparison budget) may pass it. The wall
 * clock is read at every node and the CPU clock only once it has passed the budget (a thread cannot run longer than
 * the time that passed), then again when the rest of the budget could be spent.
 *
 * Past the budget it reports its refusal (invalid_field, field `query`, naming the budget) and ends validation the
 * one way graphql-js's validate() allows: its own "Validation aborted." error, which it adds to the errors it returns
 * (errors.ts answers it in the API's words). Any other exception would leave validate() and Apollo's request
 * pipeline, which answers it 500 internal_error.
 */
export function validationBudgetRule(budgetMs: number): ValidationRule {
  return (context) => {
    const started = performance.now();
    const cpuStarted = threadCpuMs();
    let checkAt = started + budgetMs;
    return {
      enter() {
        const now = performance.now();
        if (now < checkAt) return;
        const spent = threadCpuMs() - cpuStarted;
        if (spent < budgetMs) {
          checkAt = now + (budgetMs - spent);
          return;
        }
        context.reportError(
          toGraphqlError(
            new ServiceError(
              'invalid_field',
              `the document took more than ${budgetMs} ms of CPU to validate, the most one document may take: make ` +
                'it smaller or simpler',
              { field: 'query' },
            ),
          ),
        );
        throw validationAbortedError;
      },
    };
  };
}
