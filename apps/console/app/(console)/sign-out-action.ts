'use server';

import { redirect } from 'next/navigation';
import { clearKey } from '@/lib/session.server';

export async function signOut(): Promise<void> {
  await clearKey();
  redirect('/sign-in');
}
