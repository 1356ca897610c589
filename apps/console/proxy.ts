import { NextResponse, type NextRequest } from 'next/server';
import { SESSION_COOKIE } from './lib/session-cookie';

/**
 * Without a session cookie every console page goes to the sign-in page. Whether the key in the cookie is
 * still valid is decided by the API on each page's first request (see lib/console-api.server.ts).
 */
export function proxy(request: NextRequest) {
  if (request.cookies.get(SESSION_COOKIE)?.value) return NextResponse.next();
  return NextResponse.redirect(new URL('/sign-in', request.url));
}

export const config = {
  // The app icon is public: redirected to the sign-in page it is no icon, and Chromium then asks for
  // /favicon.ico, whose 404 shows up as a console error.
  matcher: ['/((?!sign-in|_next/|favicon.ico|icon.svg).*)'],
};
