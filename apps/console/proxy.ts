import { NextResponse, type NextRequest } from 'next/server';
import { SESSION_COOKIE } from './lib/session-cookie';

/** Pages anyone may open; every other page needs a session cookie. */
const PUBLIC_PATHS = new Set(['/sign-in']);

/**
 * The Content-Security-Policy of every page. Scripts run only with this response's nonce (Next.js puts it on
 * its own scripts; the root layout on Mantine's colour-scheme script) or when loaded by such a script.
 * Styles allow inline: Mantine sets style attributes. No page may be framed (clickjacking), no form may post
 * elsewhere, and the page talks only to its own origin.
 */
export function contentSecurityPolicy(nonce: string): string {
  const scriptSrc = [`'self'`, `'nonce-${nonce}'`, `'strict-dynamic'`];
  // React's development build evaluates code for its stack traces; production builds never do.
  if (process.env.NODE_ENV === 'development') scriptSrc.push(`'unsafe-eval'`);
  return [
    `default-src 'self'`,
    `script-src ${scriptSrc.join(' ')}`,
    `style-src 'self' 'unsafe-inline'`,
    `img-src 'self' data: blob:`,
    `font-src 'self' data:`,
    `connect-src 'self'`,
    `object-src 'none'`,
    `base-uri 'self'`,
    `form-action 'self'`,
    `frame-ancestors 'none'`,
  ].join('; ');
}

/**
 * Every page gets a fresh CSP nonce. Without a session cookie every page but sign-in goes to the sign-in
 * page; whether the session is still live is decided by the API on each page's first request
 * (lib/console-api.server.ts).
 */
export function proxy(request: NextRequest) {
  const nonce = btoa(crypto.randomUUID());
  const policy = contentSecurityPolicy(nonce);
  let response: NextResponse;
  if (!PUBLIC_PATHS.has(request.nextUrl.pathname) && !request.cookies.get(SESSION_COOKIE)?.value) {
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
