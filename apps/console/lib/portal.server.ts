import 'server-only';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import type { ActionResult } from './api-error';
import { consoleConfig } from './config.server';
import type { TypedDocumentString } from '@/gql/graphql';
import { ApiFailure, sendGraphql, type VariablesArgument } from './graphql.server';
import { PORTAL_COOKIE, PORTAL_ENDED_PATH } from './portal-cookie';

/** The portal session token of this browser, if any. */
export async function readPortalToken(): Promise<string | null> {
  return (await cookies()).get(PORTAL_COOKIE)?.value ?? null;
}

/** One GraphQL operation with the portal session. Without a live session the visitor reads why on the ended page. */
export async function portalRequest<TData, TVariables>(
  document: TypedDocumentString<TData, TVariables>,
  ...variables: VariablesArgument<NoInfer<TVariables>>
): Promise<TData> {
  const token = await readPortalToken();
  if (!token) redirect(PORTAL_ENDED_PATH);
  try {
    return await sendGraphql(token, document, ...variables);
  } catch (error) {
    if (error instanceof ApiFailure && error.error.code === 'unauthorized') redirect(`${PORTAL_ENDED_PATH}?expired=1`);
    throw error;
  }
}

/** A portal server action's API work; API errors become a result the form shows. */
export async function portalAction<T>(work: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, data: await work() };
  } catch (error) {
    if (error instanceof ApiFailure) return { ok: false, error: error.error };
    throw error;
  }
}

/**
 * The cookie a portal link leaves: httpOnly, the session's lifetime. SameSite=Lax for a plain link; inside a frame
 * the page's site differs from the embedding one, where only SameSite=None (which browsers accept only with Secure)
 * is sent back, so a framed opening gets SameSite=None; Secure; Partitioned: partitioned by the embedding site
 * (CHIPS), so browsers that block third-party cookies keep it too, and no other site's frame ever sees it. Browsers
 * keep Secure cookies only from https pages (and from localhost and 127.0.0.1, which they treat as secure).
 */
export function portalCookie(token: string, expiresAt: string, framed: boolean) {
  return {
    name: PORTAL_COOKIE,
    value: token,
    httpOnly: true,
    path: '/',
    sameSite: framed ? ('none' as const) : ('lax' as const),
    secure: framed || consoleConfig.secureCookie,
    partitioned: framed,
    maxAge: Math.max(0, Math.floor((Date.parse(expiresAt) - Date.now()) / 1000)),
  };
}
