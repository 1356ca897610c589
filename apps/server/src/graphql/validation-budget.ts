import type { ValidationRule } from 'graphql';
import { ServiceError } from '@svc/core';
import { toGraphqlError } from './errors.js';

/**
 * A validation rule that stops graphql-js once it has spent `budgetMs` on a document: checked at every node, so the
 * work of one node (the overlapping-fields check of one selection set, bounded by the document limits) may pass it.
 * The refusal leaves graphql-js's validate as an exception; Apollo answers it with the error's status and code.
 */
export function validationBudgetRule(budgetMs: number): ValidationRule {
  return () => {
    const started = performance.now();
    return {
      enter() {
        if (performance.now() - started >= budgetMs)
          throw toGraphqlError(
            new ServiceError(
              'invalid_field',
              `the document took more than ${budgetMs} ms to validate, the most one document may take: make it ` +
                'smaller or simpler',
              { field: 'query' },
            ),
          );
      },
    };
  };
}
