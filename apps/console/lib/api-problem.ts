import type { ApiError } from './api-error';

export interface ApiProblem {
  title: string;
  /** What happened and what to do, in the operator's words. */
  explanation: string;
}

/**
 * The errors any page can meet whatever it shows, explained for a person; other errors are about the page's
 * own data and speak for themselves (their message is shown as is).
 */
const PROBLEMS: Record<string, ApiProblem> = {
  unauthorized: {
    title: 'Signed out',
    explanation: 'Your console session has ended. Sign in again.',
  },
  account_suspended: {
    title: 'Account suspended',
    explanation:
      'This team’s account is suspended, so the API refuses its requests: nothing can be shown or changed. Contact the operator of this installation to lift the suspension.',
  },
  rate_limited: {
    title: 'Too many requests',
    explanation: 'Your team sent more requests than its rate limit allows. Wait a few seconds, then try again.',
  },
  temporarily_unavailable: {
    title: 'API unavailable',
    explanation: 'The API cannot be reached or is overloaded right now. Try again in a moment.',
  },
};

/** A known problem, or null when the error's own message says it best. */
export function knownProblem(error: ApiError): ApiProblem | null {
  return PROBLEMS[error.code] ?? null;
}
