import 'server-only';
import { cookies, headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { SESSION_COOKIE } from './session-cookie';

export async function readKey(): Promise<string | null> {
  return (await cookies()).get(SESSION_COOKIE)?.value ?? null;
}

/** The signed-in key; without one the visitor goes to the sign-in page. */
export async function requireKey(): Promise<string> {
  const key = await readKey();
  if (!key) redirect('/sign-in');
  return key;
}

/** Secure when the console is served over https (directly or behind a proxy that says so). */
async function servedOverHttps(): Promise<boolean> {
  const proto = (await headers()).get('x-forwarded-proto') ?? '';
  return proto.split(',')[0]?.trim() === 'https';
}

/** A session cookie: gone when the browser session ends, never readable by page scripts. */
export async function storeKey(key: string): Promise<void> {
  (await cookies()).set(SESSION_COOKIE, key, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: await servedOverHttps(),
  });
}

export async function clearKey(): Promise<void> {
  (await cookies()).delete({ name: SESSION_COOKIE, path: '/' });
}
