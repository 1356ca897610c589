import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIRequestContext, FrameLocator, Page } from '@playwright/test';
import { expect, open, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;
const DOCS_IMAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/images');

/** PORTAL_SCREENSHOTS=1 writes the screenshots docs/portal.md shows (docs/images/portal-*.png). */
async function docsShot(page: Page, name: string): Promise<void> {
  if (process.env['PORTAL_SCREENSHOTS'] !== '1') return;
  await page.screenshot({ path: path.join(DOCS_IMAGES, `portal-${name}.png`), fullPage: true });
}

/** A page on its own loopback origin that frames `src`, as a customer's app embeds the portal. */
async function startFramingPage(): Promise<{ origin: string; frame(src: string): string; close(): Promise<void> }> {
  let current = '';
  const server: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(`<!doctype html><title>Customer app</title><h1>Customer app</h1>
      <iframe id="portal" src="${current}" width="1200" height="800"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    frame: (src) => {
      current = src;
      return `${origin}/`;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Opens a one-time portal link as a tenant does: its page, then the button (only the button uses the link). */
async function openLink(page: Page, link: string, frame?: FrameLocator): Promise<void> {
  if (!frame) await page.goto(link);
  await (frame ?? page).getByRole('button', { name: 'Open the portal' }).click();
}

async function rest(api: APIRequestContext, method: string, path: string, body?: unknown, headers = {}) {
  const response = await api.fetch(`/v1${path}`, {
    method,
    data: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'Idempotency-Key': `portal-${unique()}`, ...headers },
  });
  expect(response.ok(), `${method} ${path}: ${await response.text()}`).toBe(true);
  return { json: (await response.json()) as Record<string, unknown>, etag: response.headers()['etag'] ?? '' };
}

test.describe("the receivers' portal", () => {
  test('an operator hands a tenant a link; the tenant adds an endpoint, tests it, sees a failure, fixes it and replays', async ({
    signedIn: page,
    api,
    context,
  }) => {
    test.setTimeout(120_000);
    const receiver = await startReceiver();
    try {
      const run = unique();
      const tenant = await api.createTenant(`portal-${run}`, `Acme ${run}`);
      await api.createEventType(
        `invoice.paid${run.replace(/[^a-z0-9]/g, '')}`,
        'An invoice was paid',
        '{"invoice":"in_123","amount":1250}',
      );

      // The operator: Portal on the tenant's row, branding, and the one-time link. The list is filtered to this
      // tenant: other specs of the worker's team make more tenants than one page holds.
      await open(page, `/tenants?externalId=portal-${run}`);
      await page.getByRole('button', { name: `Portal of portal-${run}` }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByLabel('Display name').fill('Globex Payments');
      await dialog.getByLabel('Accent colour').fill('#0b7285');
      await dialog.getByRole('button', { name: 'Create portal link' }).click();
      const link = (await dialog.getByTestId('portal-link').textContent())!;
      expect(link).toMatch(/\/portal\/open\?token=svc_pl_/);
      await docsShot(page, 'operator-link');

      // The tenant opens it: branded, its own tenant, nothing of the operator's console.
      const portal = await context.newPage();
      await openLink(portal, link);
      await expect(portal).toHaveURL(/\/portal$/);
      await expect(portal.getByTestId('portal-title')).toHaveText('Globex Payments');
      await expect(portal.getByTestId('portal-tenant')).toHaveText(`Acme ${run}`);
      expect(await portal.locator('a[href="/dashboard"], a[href="/tenants"], a[href="/settings"]').count()).toBe(0);
      // The link opened once: opening it again says the session is over.
      const again = await context.newPage();
      await again.goto(link);
      await expect(again.getByTestId('portal-ended')).toBeVisible();
      await again.close();

      // Adds an endpoint (a loopback receiver); its secret is shown once.
      await portal.getByRole('button', { name: 'Add endpoint' }).click();
      await portal.getByLabel('URL').fill(receiver.url);
      await portal.getByLabel('Name').fill('Billing receiver');
      await docsShot(portal, 'new-endpoint');
      await portal.getByRole('button', { name: 'Create endpoint' }).click();
      await expect(portal.getByTestId('portal-secret-value')).toContainText('whsec_');
      await portal.getByRole('link', { name: 'Billing receiver' }).click();
      await expect(portal.getByTestId('portal-endpoint-url')).toHaveText(receiver.url);

      // Sends a test and sees it delivered.
      await portal.getByRole('button', { name: 'Send test event' }).click();
      await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(1);
      expect(receiver.received[0]!.headers['webhook-signature']).toMatch(/^v1,/);
      await expect(portal.getByTestId('portal-delivery-status').first()).toHaveText('succeeded', {
        timeout: DELIVERY_TIMEOUT_MS,
      });
      // The secret behind the reveal is the one that signed it.
      await portal.getByRole('button', { name: 'Reveal signing secret' }).click();
      await expect(portal.getByTestId('portal-revealed-secret')).toContainText('whsec_');
      await docsShot(portal, 'endpoint');

      // Makes it fail: the receiver answers 410, the delivery is a dead letter and the endpoint is disabled.
      receiver.answerWith(410);
      await portal.getByRole('button', { name: 'Send test event' }).click();
      await expect(portal.getByTestId('portal-delivery-status').first()).toHaveText('failed', {
        timeout: DELIVERY_TIMEOUT_MS,
      });
      await expect(portal.getByTestId('portal-attempt-result').first()).toHaveText('HTTP 410');
      await expect(portal.getByTestId('portal-endpoint-status')).toHaveText('disabled');

      // Fixes it, resumes the endpoint and replays the dead letter.
      receiver.answerWith(204);
      await portal.getByRole('button', { name: 'Resume' }).click();
      await expect(portal.getByTestId('portal-endpoint-status')).toHaveText('enabled', {
        timeout: DELIVERY_TIMEOUT_MS,
      });
      const failed = portal.getByTestId('portal-delivery').filter({ hasText: 'failed' }).first();
      await failed.getByRole('button', { name: 'Replay' }).click();
      await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBeGreaterThanOrEqual(3);
      await expect(portal.getByTestId('portal-delivery').filter({ hasText: 'replay of' }).first()).toContainText(
        'succeeded',
        { timeout: DELIVERY_TIMEOUT_MS },
      );
      await docsShot(portal, 'deliveries');

      // The event catalog shows the example the operator wrote.
      await portal.getByRole('link', { name: 'Event catalog' }).click();
      await expect(portal.getByTestId('portal-event-example').first()).toBeVisible();
      await docsShot(portal, 'catalog');

      // Every change the customer made is an operational event with the session's ID.
      const events = (
        await api.get<{ data: { type: string; data: { session_id?: string } }[] }>(
          `/events?tenant_id=${tenant.id}&order=newest&limit=50`,
        )
      ).data.map((event) => event.type);
      for (const type of [
        'webhooks.portal.session.opened',
        'webhooks.portal.endpoint.created',
        'webhooks.portal.endpoint.tested',
        'webhooks.portal.endpoint.resumed',
        'webhooks.portal.delivery.replayed',
      ])
        expect(events).toContain(type);
      await portal.close();
    } finally {
      await receiver.close();
    }
  });

  test('works framed by an allowed origin and is refused by any other', async ({
    signedIn: page,
    api,
    browserErrors,
    operator,
  }) => {
    const allowed = await startFramingPage();
    const other = await startFramingPage();
    try {
      // The operator allows one origin in the console's settings.
      await open(page, '/settings');
      await page.getByLabel("Origins allowed to frame the receivers' portal").fill(allowed.origin);
      await page.getByRole('button', { name: 'Save settings' }).click();
      await expect(page.getByText(/Settings saved/)).toBeVisible();
      const tenant = await api.createTenant(`framed-${unique()}`, 'Framed Inc');
      const session = await rest(operator, 'POST', `/tenants/${tenant.id}/portal_sessions`, {
        branding: { display_name: 'Embedded portal' },
      });
      const link = String(session.json['url']);

      await page.goto(allowed.frame(link));
      const frame = page.frameLocator('#portal');
      // The link's page is framed by the allowed origin too (its policy is read with the link), and opens there.
      await openLink(page, link, frame);
      await expect(frame.getByTestId('portal-title')).toHaveText('Embedded portal');
      await docsShot(page, 'framed');

      // The same portal on a page of another origin: the browser refuses to show it (CSP frame-ancestors).
      await page.goto(other.frame(new URL('/portal', link).toString()));
      await expect(page.getByRole('heading', { name: 'Customer app' })).toBeVisible();
      await expect.poll(() => browserErrors.some((line) => line.includes('frame-ancestors'))).toBe(true);
      await expect(frame.getByTestId('portal-title')).toHaveCount(0);
      // The refusal is what this test expects to see in the browser's console.
      browserErrors.splice(
        0,
        browserErrors.length,
        ...browserErrors.filter((line) => !line.includes('frame-ancestors')),
      );
    } finally {
      const settings = await rest(operator, 'GET', '/settings');
      await rest(operator, 'PATCH', '/settings', { portal_frame_origins: [] }, { 'If-Match': settings.etag });
      await allowed.close();
      await other.close();
    }
  });

  test("pages long lists newest first: messages 50 a page, an endpoint's deliveries 20 a page", async ({
    page,
    api,
    operator,
  }) => {
    test.setTimeout(120_000);
    const receiver = await startReceiver();
    try {
      const run = unique();
      const tenant = await api.createTenant(`paged-${run}`, 'Paged GmbH');
      const eventType = `paged.tick${run.replace(/[^a-z0-9]/g, '')}`;
      await api.createEventType(eventType, 'One of many');
      const endpoint = await api.createEndpoint({ tenant_id: tenant.id, url: receiver.url, name: 'Busy' });
      // 51 messages, one after another: the newest is last.
      const published: string[] = [];
      for (let n = 0; n < 51; n += 1)
        published.push((await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, `{"n":${n}}`)).id);
      const session = await rest(operator, 'POST', `/tenants/${tenant.id}/portal_sessions`, {
        capabilities: 'read_only',
      });
      await openLink(page, String(session.json['url']));
      await expect(page.getByTestId('portal-tenant')).toHaveText('Paged GmbH');

      // Messages: the newest 50, then the oldest alone; First page goes back.
      await page.getByRole('link', { name: 'Messages' }).click();
      const messageIds = page.getByTestId('portal-messages').locator('tbody a');
      await expect(messageIds).toHaveCount(50);
      await expect(messageIds.first()).toHaveText(published[50]!);
      await expect(messageIds.last()).toHaveText(published[1]!);
      await expect(page.getByText('50 on this page')).toBeVisible();
      await expect(page.getByRole('button', { name: 'First page' })).toBeDisabled();
      await page.getByRole('link', { name: 'Next page' }).click();
      await expect(messageIds).toHaveCount(1);
      await expect(messageIds.first()).toHaveText(published[0]!);
      await expect(page.getByRole('button', { name: 'Next page' })).toBeDisabled();
      await page.getByRole('link', { name: 'First page' }).click();
      await expect(messageIds.first()).toHaveText(published[50]!);

      // The endpoint's deliveries: 20, 20 and 11, newest first.
      await page.goto(new URL(`/portal/endpoints/${endpoint.id}`, String(session.json['url'])).toString());
      const deliveries = page.getByTestId('portal-delivery');
      const counts: number[] = [];
      const seen = new Set<string>();
      for (;;) {
        await expect(deliveries.first()).toBeVisible();
        const ids = await deliveries.evaluateAll((cards) => cards.map((card) => card.getAttribute('data-delivery-id')));
        counts.push(ids.length);
        for (const id of ids) seen.add(String(id));
        const next = page.getByRole('link', { name: 'Next page' });
        if ((await next.count()) === 0) break;
        await next.click();
        await expect(page).toHaveURL(/after=/);
        await expect(deliveries.first()).not.toHaveAttribute('data-delivery-id', ids[0]!);
      }
      expect(counts).toEqual([20, 20, 11]);
      expect(seen.size).toBe(51);

      // A cursor that is not one of this list's: the refusal is shown, with a way back.
      await page.goto(
        new URL(`/portal/endpoints/${endpoint.id}?after=not-a-cursor`, String(session.json['url'])).toString(),
      );
      await expect(page.getByText('Could not load this list')).toBeVisible();
      await page.getByRole('link', { name: 'Start over' }).click();
      await expect(deliveries).toHaveCount(20);
    } finally {
      await receiver.close();
    }
  });

  test('says so when the session expires', async ({ page, api, operator }) => {
    test.setTimeout(120_000);
    const tenant = await api.createTenant(`expiring-${unique()}`, 'Expiring Ltd');
    const session = await rest(operator, 'POST', `/tenants/${tenant.id}/portal_sessions`, {
      expires_in_seconds: 60,
      capabilities: 'read_only',
    });
    await openLink(page, String(session.json['url']));
    await expect(page.getByTestId('portal-tenant')).toHaveText('Expiring Ltd');
    // The page says so at the session's end, without a click.
    await expect(page.getByTestId('portal-ended')).toBeVisible({ timeout: 75_000 });
    await docsShot(page, 'ended');
    // And the API agrees: a reload stays on the ended page.
    await page.goto(new URL('/portal', String(session.json['url'])).toString());
    await expect(page.getByTestId('portal-ended')).toBeVisible();
  });

  test("an ed25519 endpoint's verify panel shows the previous public key while it still signs", async ({
    page,
    api,
    operator,
  }) => {
    const tenant = await api.createTenant(`rotated-${unique()}`, 'Rotated AG');
    const created = await rest(operator, 'POST', '/endpoints', {
      tenant_id: tenant.id,
      url: 'https://receiver.example.com/rotated',
      name: 'Rotated receiver',
      signature_scheme: 'ed25519',
    });
    const previousKey = String(created.json['public_key']);
    // A new ed25519 key with an hour's overlap: the previous one signs every delivery beside it until then.
    const rotated = await rest(
      operator,
      'POST',
      `/endpoints/${String(created.json['id'])}/rotate_secret`,
      { overlap_seconds: 3_600 },
      { 'If-Match': created.etag },
    );
    const currentKey = String(rotated.json['public_key']);
    expect(currentKey).toMatch(/^whpk_/);
    expect(currentKey).not.toBe(previousKey);
    const session = await rest(operator, 'POST', `/tenants/${tenant.id}/portal_sessions`, {
      capabilities: 'read_only',
    });
    await openLink(page, String(session.json['url']));
    await page.getByRole('link', { name: 'Rotated receiver' }).click();
    const verify = page.getByTestId('portal-verify');
    await expect(verify.getByTestId('portal-public-key')).toHaveText(currentKey);
    await expect(verify.getByTestId('previous-public-key')).toContainText('The previous public key still signs until');
    await expect(verify.getByTestId('old-public-key')).toHaveText(previousKey);
  });

  test("the link opens only from its page's button: reading it uses nothing, another site's form is refused", async ({
    page,
    api,
    operator,
    playwright,
  }) => {
    const scanner = await playwright.request.newContext();
    try {
      const tenant = await api.createTenant(`scanned-${unique()}`, 'Scanned Ltd');
      const session = await rest(operator, 'POST', `/tenants/${tenant.id}/portal_sessions`, {
        branding: { display_name: 'Scanned Payments' },
      });
      const link = String(session.json['url']);
      const openedAt = async () =>
        (
          (await rest(operator, 'GET', `/tenants/${tenant.id}/portal_sessions`)).json['data'] as {
            opened_at: unknown;
          }[]
        )[0]!.opened_at;

      // A mail or chat link scanner fetches the link (no script, no cookie), more than once: it reads the page only.
      for (let i = 0; i < 2; i += 1) {
        const read = await scanner.get(link, { maxRedirects: 0 });
        expect(read.status()).toBe(200);
        expect(await read.text()).toContain('Open the portal');
        expect(read.headers()['set-cookie']).toBeUndefined();
      }
      expect(await openedAt()).toBeNull();

      // Another site's form posting the token (to plant its own session in a visitor's browser) is refused.
      const confirm = new URL('/portal/open/confirm', link).toString();
      const token = new URL(link).searchParams.get('token')!;
      for (const headers of [
        { origin: 'https://attacker.example', 'sec-fetch-site': 'cross-site' } as Record<string, string>,
        { origin: 'https://attacker.example' },
      ]) {
        const forged = await scanner.post(confirm, { form: { token }, headers, maxRedirects: 0 });
        expect(forged.status()).toBe(403);
        expect(forged.headers()['set-cookie']).toBeUndefined();
      }
      expect(await openedAt()).toBeNull();

      // The tenant's browser: the page names the operator; its button opens the portal.
      await page.goto(link);
      await expect(page.getByText('Scanned Payments invites you to manage your webhooks')).toBeVisible();
      await page.getByRole('button', { name: 'Open the portal' }).click();
      await expect(page).toHaveURL(/\/portal$/);
      await expect(page.getByTestId('portal-tenant')).toHaveText('Scanned Ltd');
      expect(await openedAt()).not.toBeNull();
      // Used now: its page says so.
      const again = await scanner.get(link);
      expect(await again.text()).toContain('This link has already been used');
    } finally {
      await scanner.dispose();
    }
  });
});
