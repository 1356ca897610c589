'use server';

import { redirect } from 'next/navigation';
import { ApiFailure, graphql } from '@/lib/graphql.server';
import { storeKey } from '@/lib/session.server';

export interface SignInState {
  error: string | null;
}

const VIEWER = `query SignInViewer { viewer { teamId teamName } }`;

/** Verifies the pasted key with the `viewer` query; only a key the API accepts is stored. */
export async function signIn(_previous: SignInState, form: FormData): Promise<SignInState> {
  const raw = form.get('key');
  const key = typeof raw === 'string' ? raw.trim() : '';
  if (key === '') return { error: 'Paste a secret key.' };
  if (!key.startsWith('svc_sk_')) return { error: 'A secret key starts with svc_sk_.' };
  try {
    await graphql<{ viewer: { teamId: string; teamName: string } }>(key, VIEWER);
  } catch (error) {
    if (error instanceof ApiFailure && error.error.code === 'unauthorized')
      return { error: 'This key was not accepted. Check that it is a current secret key of your team.' };
    if (error instanceof ApiFailure) return { error: error.error.message };
    throw error;
  }
  await storeKey(key);
  redirect('/tenants');
}
