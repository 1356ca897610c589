'use server';

import { graphql } from '@/gql';
import { ApiFailure, sendGraphql } from '@/lib/graphql.server';
import { storeSession } from '@/lib/session.server';

export interface SignInState {
  error: string | null;
  /** The session cookie was set: the form opens the dashboard with a page load of its own. */
  signedIn?: boolean;
}

const CreateConsoleSessionMutation = graphql(`
  mutation CreateConsoleSession($secretKey: String!) {
    createConsoleSession(secretKey: $secretKey) {
      token
      expiresAt
    }
  }
`);

const REFUSALS: Record<string, string> = {
  unauthorized: 'This key was not accepted. Check that it is a current secret key of your team.',
  account_suspended: 'This team’s account is suspended, so the API accepts none of its keys. Contact the operator.',
  rate_limited: 'Too many sign-ins just now. Wait a moment and try again.',
};

/**
 * Trades the pasted key for a console session; only the session token is kept, in an httpOnly cookie. No
 * `redirect()` here: Next.js would render the dashboard inside this action's answer with the cookie it just set, even
 * when the browser refuses that cookie (a Secure cookie over plain http), so one signed-in page would show without a
 * session. The form loads the dashboard itself, and the browser's own cookies decide what it gets.
 */
export async function signIn(_previous: SignInState, form: FormData): Promise<SignInState> {
  const raw = form.get('key');
  const key = typeof raw === 'string' ? raw.trim() : '';
  if (key === '') return { error: 'Paste a secret key.' };
  if (!key.startsWith('svc_sk_')) return { error: 'A secret key starts with svc_sk_.' };
  let session: { token: string; expiresAt: string };
  try {
    ({ createConsoleSession: session } = await sendGraphql(null, CreateConsoleSessionMutation, { secretKey: key }));
  } catch (error) {
    if (error instanceof ApiFailure) return { error: REFUSALS[error.error.code] ?? error.error.message };
    throw error;
  }
  await storeSession(session.token, session.expiresAt);
  return { error: null, signedIn: true };
}
