import { randomBytes, randomUUID } from 'node:crypto';
import {
  test as base,
  expect,
  type APIRequestContext,
  type Cookie,
  type Locator,
  type Page,
  type Response,
  type TestInfo,
} from '@playwright/test';
import { readStackInfo, type StackInfo } from './stack';

/** The REST API, used to make data a test needs but does not exercise. */
export class RestApi {
  constructor(private readonly request: APIRequestContext) {}

  /** POST with a fresh Idempotency-Key; waits out config-write rate limits like a polite client. */
  async post<T>(path: string, body: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const response = await this.request.post(`/v1${path}`, {
        data: body,
        headers: { 'Idempotency-Key': randomUUID() },
      });
      if (response.status() === 429 && attempt < 20) {
        const seconds = Number(response.headers()['retry-after'] ?? '1');
        await new Promise((resolve) => setTimeout(resolve, Math.max(seconds, 0.2) * 1000));
        continue;
      }
      if (!response.ok()) throw new Error(`POST /v1${path} answered ${response.status()}: ${await response.text()}`);
      return (await response.json()) as T;
    }
  }

  /** GET a JSON answer (reads a test checks the console against). */
  async get<T>(path: string): Promise<T> {
    const response = await this.request.get(`/v1${path}`);
    if (!response.ok()) throw new Error(`GET /v1${path} answered ${response.status()}: ${await response.text()}`);
    return (await response.json()) as T;
  }

  /** PATCH with If-Match holding the resource's current ETag (read just before). */
  async patch<T>(path: string, body: unknown): Promise<T> {
    const current = await this.request.get(`/v1${path}`);
    const response = await this.request.patch(`/v1${path}`, {
      data: body,
      headers: { 'If-Match': current.headers()['etag'] ?? '' },
    });
    if (!response.ok()) throw new Error(`PATCH /v1${path} answered ${response.status()}: ${await response.text()}`);
    return (await response.json()) as T;
  }

  createTenant(externalId: string, name: string, metadata: Record<string, string> = {}): Promise<{ id: string }> {
    return this.post('/tenants', { external_id: externalId, name, metadata });
  }

  /** `example` is JSON text, sent exactly as written (1.50 stays 1.50). */
  createEventType(name: string, description = '', example?: string): Promise<{ id: string }> {
    return this.post('/event_types', withRawMembers({ name, description }, { example }));
  }

  /** `filter` and `transform` are JSON text, sent exactly as written. The answer carries the signing secret. */
  createEndpoint(
    fields: Record<string, unknown> & { tenant_id: string; url: string },
    rules: { filter?: string; transform?: string } = {},
  ): Promise<{ id: string; name: string; signing_secret: string }> {
    return this.post('/endpoints', withRawMembers(fields, rules));
  }

  /** POST /sources; the answer carries the receive URL and, for kinds that generate theirs, the secret. */
  createSource(
    fields: Record<string, unknown> & { tenant_id: string; verification: Record<string, unknown> },
  ): Promise<{ id: string; receive_url: string; secret?: string }> {
    return this.post('/sources', fields);
  }

  /** POST /messages; `payload` is JSON text, sent exactly as written (leave it out to send body_base64). */
  publishMessage(
    fields: Record<string, unknown> & { tenant_id: string; event_type: string },
    payload?: string,
  ): Promise<{ id: string; status: string }> {
    return this.post('/messages', withRawMembers(fields, { payload }));
  }
}

/** A JSON body whose `raw` members are spliced in as written, so the API sees their exact text. */
function withRawMembers(fields: Record<string, unknown>, raw: Record<string, string | undefined>): string {
  const members = Object.entries(raw)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, text]) => `${JSON.stringify(name)}:${text}`);
  const plain = JSON.stringify(fields);
  if (members.length === 0) return plain;
  return `${plain.slice(0, -1)}${plain === '{}' ? '' : ','}${members.join(',')}}`;
}

/** A short unique suffix so tests sharing one team never collide. */
export function unique(): string {
  return `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** The value cell of a label/value row in one of the console's field tables (the endpoint page's, for example). */
export function field(page: Page, table: string, label: string): Locator {
  return page.getByRole('table', { name: table }).locator(`tr:has(th:text-is("${label}")) td`);
}

/**
 * With E2E_SNAPSHOTS=1, saves a named full-page screenshot of what the user sees at this step into the test's output
 * folder, for a person to look through. Off by default: CI keeps no artifacts, and the run's 106 full-page
 * screenshots cost CPU the 2-core test run does not have to spare. A failed test's screenshot is always taken.
 */
export async function snap(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  if (process.env['E2E_SNAPSHOTS'] !== '1') return;
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: true });
}

/** Waits for the console's hydration mark: before it, buttons are server HTML and a click does nothing. */
async function hydrated(page: Page): Promise<void> {
  await page.locator('html[data-hydrated]').waitFor({ state: 'attached' });
}

/** Opens a console page with a full load and waits until it is interactive. */
export async function open(page: Page, path: string): Promise<Response | null> {
  const response = await page.goto(path);
  await hydrated(page);
  return response;
}

/** Reloads the page (server-rendered pages show what was there when they loaded) and waits until it is interactive. */
export async function reload(page: Page): Promise<void> {
  await page.reload();
  await hydrated(page);
}

/** Signs in through the sign-in page the way an operator does. */
export async function signIn(page: Page, key: string): Promise<void> {
  await open(page, '/sign-in');
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/dashboard$/);
}

interface TestFixtures {
  api: RestApi;
  /** The REST API with the worker's team key, as an operator's script calls it (each request sets its own headers). */
  operator: APIRequestContext;
  /** Fails a test whose page threw or logged an error (hydration mismatches, failed requests, crashes). */
  browserErrors: string[];
  /**
   * A page on the dashboard, signed in with the worker's console session (signed in once per worker through the
   * sign-in page). A test that signs out must use `ownSession`: signing out ends the session for every test.
   */
  signedIn: Page;
  /** A page signed in through the sign-in page with a session of its own, on the dashboard. */
  ownSession: Page;
}

interface WorkerFixtures {
  stack: StackInfo;
  /** The cookies of one console session, signed in through the sign-in page once per worker. */
  workerSession: Cookie[];
}

export const test = base.extend<TestFixtures, WorkerFixtures>({
  // Playwright reads fixture dependencies from the destructuring pattern; this one has none.
  stack: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use, workerInfo) => {
      const info = readStackInfo();
      const worker = workerInfo.parallelIndex % info.keys.length;
      await use({ ...info, key: info.keys[worker]!, teamName: info.teamNames[worker]! });
    },
    { scope: 'worker' },
  ],
  // Signing in took 1.1 to 2.5 s of a 3.5 to 4.5 s test; one session per worker serves every test that does not
  // sign out.
  workerSession: [
    async ({ browser, stack }, use) => {
      const context = await browser.newContext({ baseURL: stack.consoleUrl });
      const page = await context.newPage();
      await signIn(page, stack.key);
      const cookies = await context.cookies();
      await context.close();
      await use(cookies);
    },
    { scope: 'worker' },
  ],
  baseURL: async ({ stack }, use) => use(stack.consoleUrl),
  operator: async ({ playwright, stack }, use) => {
    const request = await playwright.request.newContext({
      baseURL: stack.apiUrl,
      extraHTTPHeaders: { Authorization: `Bearer ${stack.key}`, 'Content-Type': 'application/json' },
    });
    await use(request);
    await request.dispose();
  },
  api: async ({ operator }, use) => use(new RestApi(operator)),
  browserErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.message}`));
      page.on('console', (message) => {
        // The location names the resource of a "Failed to load resource" error, even one the page did not request.
        if (message.type() === 'error') errors.push(`console: ${message.text()} (at ${message.location().url})`);
      });
      // Names the resource behind a "Failed to load resource" console error in the failure message.
      const failed: string[] = [];
      page.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${new URL(response.url()).pathname}`);
      });
      await use(errors);
      expect(errors, `errors in the browser (responses over 399: ${failed.join(', ') || 'none'})`).toEqual([]);
    },
    { auto: true },
  ],
  signedIn: async ({ page, workerSession }, use) => {
    await page.context().addCookies(workerSession);
    await open(page, '/dashboard');
    await use(page);
  },
  ownSession: async ({ page, stack }, use) => {
    await signIn(page, stack.key);
    await use(page);
  },
});

export { expect };
