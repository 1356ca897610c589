import 'server-only';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import { consoleConfig } from './config.server';
import { LEGACY_KEY_COOKIE, SESSION_COOKIE } from './session-cookie';

export async function readSessionToken(): Promise<string | null> {
  return (await cookies()).get(SESSION_COOKIE)?.value ?? null;
}

/** The session token of the signed-in operator; without one the visitor goes to the sign-in page. */
export async function requireSessionToken(): Promise<string> {
  const token = await readSessionToken();
  if (!token) redirect('/sign-in');
  return token;
}

/**
 * Keeps the session token, never the key: httpOnly, SameSite=Lax (links from elsewhere open the console
 * signed in; cross-site posts carry no cookie), Secure by default, and gone when the session ends.
 */
export async function storeSession(token: string, expiresAt: string): Promise<void> {
  const jar = await cookies();
  jar.delete({ name: LEGACY_KEY_COOKIE, path: '/' });
  jar.set(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: consoleConfig.secureCookie,
    maxAge: Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000)),
  });
}

export async function clearSession(): Promise<void> {
  const jar = await cookies();
  jar.delete({ name: SESSION_COOKIE, path: '/', secure: consoleConfig.secureCookie, httpOnly: true });
  jar.delete({ name: LEGACY_KEY_COOKIE, path: '/' });
}
