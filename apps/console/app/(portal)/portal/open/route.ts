import { NextResponse, type NextRequest } from 'next/server';
import { graphql } from '@/gql';
import { ApiFailure, sendGraphql } from '@/lib/graphql.server';
import { PORTAL_ENDED_PATH } from '@/lib/portal-cookie';
import { portalCookie } from '@/lib/portal.server';

const OpenPortalSessionMutation = graphql(`
  mutation OpenPortalSession($linkToken: String!) {
    openPortalSession(linkToken: $linkToken) {
      token
      expiresAt
    }
  }
`);

/**
 * The one-time link: its token is exchanged for a portal session once, the session goes into the portal's cookie
 * and the browser moves on to the portal, so the token leaves the address bar (and the history) at once. A used,
 * expired or revoked link leads to the page that says the session has ended.
 */
export async function GET(request: NextRequest) {
  const linkToken = request.nextUrl.searchParams.get('token') ?? '';
  // Sec-Fetch-Dest says whether the browser loads this page inside a frame (every current browser sends it).
  const framed = request.headers.get('sec-fetch-dest') === 'iframe';
  try {
    const { openPortalSession } = await sendGraphql(null, OpenPortalSessionMutation, { linkToken });
    const response = NextResponse.redirect(new URL('/portal', request.url), 303);
    response.cookies.set(portalCookie(openPortalSession.token, openPortalSession.expiresAt, framed));
    response.headers.set('referrer-policy', 'no-referrer');
    return response;
  } catch (error) {
    if (!(error instanceof ApiFailure)) throw error;
    const reason = error.error.code === 'unauthorized' ? 'link' : 'unavailable';
    return NextResponse.redirect(new URL(`${PORTAL_ENDED_PATH}?reason=${reason}`, request.url), 303);
  }
}
