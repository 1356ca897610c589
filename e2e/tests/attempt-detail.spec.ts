import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Locator, Page } from '@playwright/test';
import { expect, open, reload, type RestApi, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;
const DOCS_IMAGES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../docs/images');

/** A loopback port nothing listens on: a connection to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The message page once its first delivery has an attempt. */
async function attemptOf(page: Page, messageId: string): Promise<Locator> {
  await open(page, `/messages/${messageId}`);
  const attempt = page.locator('section[data-testid="delivery"][data-generation="0"]').getByTestId('attempt');
  await expect(async () => {
    await reload(page);
    await expect(attempt).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
  return attempt;
}

/** Opens a read-only portal session of a tenant in a new page, on the page of one of its endpoints. */
async function portalEndpoint(context: BrowserContext, api: RestApi, tenantId: string, endpoint: string) {
  const session = await api.post<{ url: string }>(`/tenants/${tenantId}/portal_sessions`, {});
  const portal = await context.newPage();
  await portal.goto(session.url);
  await portal.getByRole('button', { name: 'Open the portal' }).click();
  await expect(portal).toHaveURL(/\/portal$/);
  await portal.getByRole('link', { name: endpoint }).click();
  return portal;
}

test('an attempt without an answer says where and why it failed; one with an answer says how to keep its body', async ({
  signedIn: page,
  api,
  context,
}, testInfo) => {
  const run = `detail-${unique()}`;
  const tenant = await api.createTenant(run, `Detail ${run}`);
  const eventType = `order.shipped${run.replace(/[^a-z0-9]/g, '')}`;
  await api.createEventType(eventType, 'An order was shipped');

  // Nothing listens on the port: the connection is refused, and the card says so, with the address and timings.
  const port = await closedPort();
  const refused = await api.createEndpoint({
    tenant_id: tenant.id,
    url: `http://127.0.0.1:${port}/hooks`,
    name: `Refused ${run}`,
    retry_delays_seconds: [3600],
  });
  expect(refused.id).toMatch(/^wde_/);
  const first = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"order":1}');
  const attempt = await attemptOf(page, first.id);
  await expect(attempt.getByTestId('attempt-answer')).toHaveText('network_error');
  await expect(attempt.getByTestId('attempt-failure-cause')).toHaveText(
    'connection refused while connecting (ECONNREFUSED)',
  );
  await expect(attempt.getByTestId('attempt-failure-timings')).toContainText(`127.0.0.1:${port} · connect `);
  await expect(attempt.getByTestId('attempt-failure-timings')).toContainText(' ms · total ');
  // No answer, no body to keep: the response body hint is for answered attempts only.
  await expect(attempt.getByTestId('response-body-hint')).toHaveCount(0);
  await snap(page, testInfo, '01-refused-attempt');
  // ATTEMPT_SCREENSHOTS=1 writes the delivery card docs/console.md shows (docs/images/attempt-network-detail.png).
  if (process.env['ATTEMPT_SCREENSHOTS'] === '1')
    await page
      .locator('section[data-testid="delivery"][data-generation="0"]')
      .screenshot({ path: path.join(DOCS_IMAGES, 'attempt-network-detail.png') });

  // A receiver that answers 400: response body logging is off by default, so the card says how to turn it on.
  const receiver = await startReceiver(400);
  try {
    const other = await api.createTenant(`${run}-b`, `Detail ${run} b`);
    await api.createEndpoint({ tenant_id: other.id, url: receiver.url, name: `Answers ${run}` });
    const second = await api.publishMessage({ tenant_id: other.id, event_type: eventType }, '{"order":2}');
    const answered = await attemptOf(page, second.id);
    await expect(answered.getByTestId('attempt-answer')).toHaveText('HTTP 400');
    await expect(answered.getByTestId('attempt-network-detail')).toHaveCount(0);
    await expect(answered.getByTestId('response-body-hint')).toContainText(
      'turn on Response body logging in Settings (response_body_logging)',
    );

    // The receivers' portal shows the same: the cause and timings, and whom to ask for response bodies.
    const refusedPortal = await portalEndpoint(context, api, tenant.id, `Refused ${run}`);
    const portalAttempt = refusedPortal.getByTestId('portal-attempt').first();
    await expect(portalAttempt.getByTestId('portal-attempt-result')).toContainText('network_error');
    await expect(portalAttempt.getByTestId('attempt-failure-cause')).toHaveText(
      'connection refused while connecting (ECONNREFUSED)',
    );
    await expect(portalAttempt.getByTestId('attempt-failure-timings')).toContainText(`127.0.0.1:${port}`);
    await expect(portalAttempt.getByTestId('response-body-hint')).toHaveCount(0);
    const answeredPortal = await portalEndpoint(context, api, other.id, `Answers ${run}`);
    const answeredAttempt = answeredPortal.getByTestId('portal-attempt').first();
    await expect(answeredAttempt.getByTestId('portal-attempt-result')).toHaveText('HTTP 400');
    await expect(answeredAttempt.getByTestId('response-body-hint')).toContainText(
      'ask the sender to turn on response body logging (response_body_logging)',
    );
  } finally {
    await receiver.close();
  }
});
