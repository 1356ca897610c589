'use server';

import { redirect } from 'next/navigation';
import { graphql } from '@/gql';
import { ApiFailure, sendGraphql } from '@/lib/graphql.server';
import { clearSession, readSessionToken } from '@/lib/session.server';

const EndConsoleSessionMutation = graphql(`
  mutation EndConsoleSession {
    endConsoleSession
  }
`);

/** Revokes the session at the API, so a copy of the cookie stops working too, then forgets it here. */
export async function signOut(): Promise<void> {
  const token = await readSessionToken();
  let revoked = true;
  if (token) {
    try {
      await sendGraphql(token, EndConsoleSessionMutation);
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      // An ended session is as good as revoked; anything else leaves it to expire on its own.
      revoked = error.error.code === 'unauthorized';
      if (!revoked) console.error('the API did not end the console session', error.error.code);
    }
  }
  await clearSession();
  redirect(revoked ? '/sign-in' : '/sign-in?unconfirmed=1');
}
