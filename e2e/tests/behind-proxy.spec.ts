import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from '@playwright/test';
import { expect, test } from '../support/fixtures';

/**
 * docs/deploying.md, "TLS and a reverse proxy" and "The console's cookie": the console behind a TLS-terminating
 * proxy under a host name that is not loopback (Chromium maps it to 127.0.0.1), as a browser elsewhere reaches it.
 */
const HOST = 'console.svc.test';
const SESSION_COOKIE = 'svc_console_session';

/** A self-signed certificate for HOST (the browser context ignores that nobody vouches for it). */
function certificate(): { key: string; cert: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'svc-proxy-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        `/CN=${HOST}`,
        '-addext',
        `subjectAltName=DNS:${HOST}`,
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      key: readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A TLS-terminating reverse proxy to the console, as the page's nginx block configures one: X-Forwarded-For with
 * the peer appended, X-Forwarded-Proto https, and the browser's Host passed on (`proxy_set_header Host $host`) or,
 * like nginx without that line, the upstream's address instead.
 */
async function startProxy(upstream: string, passHost: boolean): Promise<{ port: number; close(): Promise<void> }> {
  const target = new URL(upstream);
  const server = https.createServer(certificate(), (request, response) => {
    const headers = { ...request.headers };
    if (!passHost) headers.host = target.host;
    headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], request.socket.remoteAddress]
      .filter(Boolean)
      .join(', ');
    headers['x-forwarded-proto'] = 'https';
    const proxied = http.request(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    proxied.once('error', () => response.destroy());
    request.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let browser: Browser | undefined;

/** Chromium as the config launches it, with HOST resolving to 127.0.0.1. */
async function browserWithHost(launcher: Browser): Promise<Browser> {
  const configured = test.info().project.use.launchOptions ?? {};
  browser ??= await launcher.browserType().launch({
    ...configured,
    args: [...(configured.args ?? []), `--host-resolver-rules=MAP ${HOST} 127.0.0.1`],
  });
  return browser;
}

test.afterAll(async () => {
  await browser?.close();
});

/** Signs in with the key on the page at the origin given; returns the sign-in post's status. */
async function signInAt(page: Page, origin: string, key: string): Promise<number> {
  await page.goto(`${origin}/sign-in`);
  await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
  await page.getByLabel('Secret key').fill(key);
  const post = page.waitForResponse(
    (response) => response.request().method() === 'POST' && new URL(response.url()).pathname === '/sign-in',
  );
  await page.getByRole('button', { name: 'Sign in' }).click();
  return (await post).status();
}

async function sessionCookie(context: BrowserContext) {
  return (await context.cookies()).find((cookie) => cookie.name === SESSION_COOKIE);
}

/**
 * Runs `body` with a page of a fresh browser context at the console's origin: through a TLS proxy (passing Host or
 * not), or straight over plain http; everything is closed after it.
 */
async function atOrigin(
  launcher: Browser,
  consoleUrl: string,
  via: 'proxy passing Host' | 'proxy not passing Host' | 'plain http',
  body: (page: Page, origin: string, context: BrowserContext) => Promise<void>,
): Promise<void> {
  const proxy = via === 'plain http' ? null : await startProxy(consoleUrl, via === 'proxy passing Host');
  const context = await (await browserWithHost(launcher)).newContext({ ignoreHTTPSErrors: proxy !== null });
  try {
    // Plain http: docker-compose.yml's published console port, reached from another machine.
    const origin = proxy ? `https://${HOST}:${proxy.port}` : `http://${HOST}:${new URL(consoleUrl).port}`;
    await body(await context.newPage(), origin, context);
  } finally {
    await context.close();
    await proxy?.close();
  }
}

test('behind a TLS proxy that passes Host: sign-in works, the session cookie is Secure, and every request stays on https', async ({
  browser: launcher,
  stack,
}) => {
  await atOrigin(launcher, stack.consoleUrl, 'proxy passing Host', async (page, origin, context) => {
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    // The action answers 200 with its redirect inside (a fetch from the page, not a form post).
    expect(await signInAt(page, origin, stack.key)).toBe(200);
    await expect(page).toHaveURL(`${origin}/dashboard`);
    await expect(page.getByRole('heading', { name: 'Dashboard' })).toBeVisible();
    expect(await sessionCookie(context)).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Lax', domain: HOST });
    // The cookie comes back: another page opens signed in.
    await page.goto(`${origin}/settings`);
    await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
    // Redirects are relative, so nothing ever left the proxy's https origin.
    expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
  });
});

test('over plain http under a name that is not loopback, the browser keeps no session (the cookie is Secure)', async ({
  browser: launcher,
  stack,
}) => {
  await atOrigin(launcher, stack.consoleUrl, 'plain http', async (page, origin, context) => {
    // The console took the key and set its cookie (the action ran: 200, not the refusal's 500); the browser dropped it.
    expect(await signInAt(page, origin, stack.key)).toBe(200);
    await expect(page).toHaveURL(`${origin}/sign-in`);
    expect(await sessionCookie(context)).toBeUndefined();
  });
});

test('behind a proxy that does not pass Host, Next.js refuses the sign-in post (Origin and Host differ)', async ({
  browser: launcher,
  stack,
}) => {
  await atOrigin(launcher, stack.consoleUrl, 'proxy not passing Host', async (page, origin, context) => {
    expect(await signInAt(page, origin, stack.key)).toBe(500);
    await expect(page).toHaveURL(`${origin}/sign-in`);
    expect(await sessionCookie(context)).toBeUndefined();
  });
});
