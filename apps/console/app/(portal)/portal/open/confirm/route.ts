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
 * Whether this POST comes from a page of the console itself (the link's page, framed or not), not another site: a
 * form another site submits would otherwise plant that site's portal session in the visitor's browser (login CSRF).
 * Sec-Fetch-Site says so in every current browser; without it, the Origin must name this host.
 */
function fromThisSite(request: NextRequest): boolean {
  const site = request.headers.get('sec-fetch-site');
  if (site !== null) return site === 'same-origin';
  const origin = request.headers.get('origin');
  const host = request.headers.get('x-forwarded-host') ?? request.headers.get('host');
  return origin !== null && host !== null && URL.canParse(origin) && new URL(origin).host === host;
}

/**
 * Opens a one-time portal link, from the button on its page (open/page.tsx): the token is exchanged for a portal
 * session once, the session goes into the portal's cookie and the browser moves on to the portal. Only this POST
 * uses the link: reading its page (a link scanner, a preview) does not. A used, expired or revoked link leads to the
 * page that says the session has ended; a POST from another site is refused and uses nothing.
 */
export async function POST(request: NextRequest) {
  if (!fromThisSite(request))
    return new NextResponse('Refused: a portal link opens from its own page.', {
      status: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
  const form = await request.formData().catch(() => null);
  const linkToken = form?.get('token');
  // Sec-Fetch-Dest says whether the browser submits this form inside a frame (every current browser sends it).
  const framed = request.headers.get('sec-fetch-dest') === 'iframe';
  try {
    const { openPortalSession } = await sendGraphql(null, OpenPortalSessionMutation, {
      linkToken: typeof linkToken === 'string' ? linkToken : '',
    });
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
