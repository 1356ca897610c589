import { NextResponse, type NextRequest } from 'next/server';
import { API_GRAPHQL_URL } from './lib/api-url';
import { PORTAL_COOKIE, PORTAL_OPEN_PATH } from './lib/portal-cookie';
import { frameAncestors, portalFrameOrigins, portalLinkFrameOrigins } from './lib/portal-frame';
import { SESSION_COOKIE } from './lib/session-cookie';

/** Pages anyone may open; every other page needs a session cookie. */
const PUBLIC_PATHS = new Set(['/sign-in']);

/** The receivers' portal: its own cookie, checked by its pages; never the console's (docs/portal.md). */
const isPortalPath = (pathname: string) => pathname === '/portal' || pathname.startsWith('/portal/');

/**
 * The Content-Security-Policy of every page. Scripts run only with this response's nonce (Next.js puts it on
 * its own scripts; the root layout on Mantine's colour-scheme script) or when loaded by such a script.
 * Styles allow inline: Mantine sets style attributes. No page may be framed (clickjacking), no form may post
 * elsewhere, and the page talks only to its own origin.
 */
export function contentSecurityPolicy(nonce: string, portal: { ancestors: string } | null = null): string {
  const scriptSrc = [`'self'`, `'nonce-${nonce}'`, `'strict-dynamic'`];
  // React's development build evaluates code for its stack traces; production builds never do.
  if (process.env.NODE_ENV === 'development') scriptSrc.push(`'unsafe-eval'`);
  return [
    `default-src 'self'`,
    `script-src ${scriptSrc.join(' ')}`,
    `style-src 'self' 'unsafe-inline'`,
    // The portal shows the operator's logo from its https URL.
    `img-src 'self' data: blob:${portal ? ' https:' : ''}`,
    `font-src 'self' data:`,
    `connect-src 'self'`,
    `object-src 'none'`,
    `base-uri 'self'`,
    `form-action 'self'`,
    `frame-ancestors ${portal?.ancestors ?? `'none'`}`,
  ].join('; ');
}

/**
 * Every page gets a fresh CSP nonce. Without a session cookie every page but sign-in goes to the sign-in
 * page; whether the session is still live is decided by the API on each page's first request
 * (lib/console-api.server.ts).
 */
export async function proxy(request: NextRequest) {
  const nonce = btoa(crypto.randomUUID());
  const { pathname } = request.nextUrl;
  const portal = isPortalPath(pathname);
  // A portal page may be framed by exactly the origins its operator allows; every other page by none. A link's own
  // page (before there is a session) asks with the link's token, which reading does not use.
  const linkToken = pathname === PORTAL_OPEN_PATH ? request.nextUrl.searchParams.get('token') : null;
  const portalToken = portal ? request.cookies.get(PORTAL_COOKIE)?.value : undefined;
  const ancestors = linkToken
    ? frameAncestors(await portalLinkFrameOrigins(API_GRAPHQL_URL, linkToken))
    : portalToken
      ? frameAncestors(await portalFrameOrigins(API_GRAPHQL_URL, portalToken))
      : `'none'`;
  const policy = contentSecurityPolicy(nonce, portal ? { ancestors } : null);
  let response: NextResponse;
  if (!portal && !PUBLIC_PATHS.has(pathname) && !request.cookies.get(SESSION_COOKIE)?.value) {
    response = NextResponse.redirect(new URL('/sign-in', request.url));
  } else {
    // Next.js reads the nonce from the request's CSP header; the root layout reads x-nonce.
    const headers = new Headers(request.headers);
    headers.set('x-nonce', nonce);
    headers.set('content-security-policy', policy);
    response = NextResponse.next({ request: { headers } });
  }
  response.headers.set('content-security-policy', policy);
  return response;
}

export const config = {
  // Static files carry no scripts of their own. The icons are public: Chromium asks for /favicon.ico now and then
  // despite the icon link, and a redirect or a 404 there shows up as a console error.
  matcher: ['/((?!_next/static|_next/image|favicon.ico|icon.svg).*)'],
};
