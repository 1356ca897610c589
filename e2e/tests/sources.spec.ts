import { randomBytes } from 'node:crypto';
import type { Locator, Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { expect, open, reload, type RestApi, snap, test, unique } from '../support/fixtures';
import { postToReceiveUrl } from '../support/receive';
import { startReceiver } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;

/** The value cell of a label/value row in a field table. */
function field(page: Page, table: string, label: string): Locator {
  return page.getByRole('table', { name: table }).locator(`tr:has(th:text-is("${label}")) td`);
}

/** Reloads until `check` passes: the source page is rendered on the server and shows what was there when it loaded. */
async function reloadUntil(page: Page, check: () => Promise<void>): Promise<void> {
  await expect(async () => {
    await reload(page);
    await check();
  }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
}

/** A tenant and a catalog prefix of its own (event type names are lowercase words separated by dots). */
async function setup(api: RestApi, prefix: string) {
  const id = unique();
  const run = `${prefix}-${id}`;
  const tenantName = `Merchant ${run}`;
  const tenant = await api.createTenant(run, tenantName);
  return { run, tenant, tenantName, typePrefix: `${prefix}${id}.` };
}

const RECEIVE_URL = /^http:\/\/localhost:\d+\/v1\/receive\/rcv_[A-Za-z0-9_-]+$/;

test('create a payments source in the console; a capture signed with the stripe library reaches the endpoint', async ({
  signedIn: page,
  api,
  context,
  stack,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    const { run, tenant, tenantName, typePrefix } = await setup(api, 'pay');
    const eventType = `${typePrefix}payment_intent.succeeded`;
    await api.createEventType(eventType, 'A payment succeeded');
    await api.createEndpoint({ tenant_id: tenant.id, url: receiver.url, name: `Orders ${run}` });
    const secret = `whsec_${randomBytes(24).toString('hex')}`;

    // From the tenant's row to its sources, where the new source starts with that tenant picked.
    await open(page, `/tenants?externalId=${run}`);
    await page.getByRole('link', { name: `Sources of ${run}` }).click();
    await expect(page).toHaveURL(new RegExp(`/sources\\?tenant=${tenant.id}$`));
    await expect(page.getByRole('table', { name: 'Sources' })).toContainText(`${tenantName} has no sources yet.`);
    await page.waitForLoadState('networkidle');
    await page.getByRole('button', { name: 'New source' }).click();
    const form = page.getByRole('dialog', { name: 'New source' });
    await expect(form.getByRole('textbox', { name: 'Tenant' })).toHaveValue(`${tenantName} (${run})`);
    await form.getByRole('textbox', { name: 'Name' }).fill(`Payments ${run}`);
    // Each kind asks for exactly its settings, defaults filled in: hmac has several, payments none.
    const kindPicker = form.getByRole('textbox', { name: 'Verifier kind' });
    await kindPicker.click();
    await page.getByRole('option', { name: 'hmac', exact: true }).click();
    await expect(form.getByRole('textbox', { name: 'Header', exact: true })).toHaveValue('');
    await expect(form.getByRole('textbox', { name: 'Algorithm' })).toHaveValue('sha256');
    await expect(form.getByRole('textbox', { name: 'Encoding' })).toHaveValue('hex');
    await expect(form.getByRole('textbox', { name: 'Signed content' })).toHaveValue('{body}');
    await expect(form.getByRole('textbox', { name: 'Timestamp header' })).toHaveAccessibleDescription(/Blank for none/);
    await kindPicker.click();
    await page.getByRole('option', { name: 'payments', exact: true }).click();
    await expect(form.getByRole('textbox', { name: 'Header', exact: true })).toHaveCount(0);
    await expect(form.getByText('This kind has no settings.')).toBeVisible();
    await expect(form.getByLabel('Secret')).toHaveAccessibleDescription(/the secret the provider issued/i);
    await form.getByLabel('Secret').fill(secret);
    await form.getByText('From the body', { exact: true }).click();
    await form.getByRole('textbox', { name: 'Event type path' }).fill('/type');
    await form.getByRole('textbox', { name: 'Event type prefix' }).fill(typePrefix);
    await snap(page, testInfo, '01-create-form');
    await form.getByRole('button', { name: 'Create source' }).click();

    // The receive URL is shown once, with the server's public base URL; the typed secret is not shown back.
    const shown = page.getByRole('dialog', { name: 'Source created' });
    await expect(shown).toContainText('This receive URL is shown once; store it now. It cannot be shown again');
    await expect(shown.getByTestId('receive-url')).toHaveText(RECEIVE_URL);
    await expect(shown.getByTestId('source-secret')).toHaveCount(0);
    const receiveUrl = (await shown.getByTestId('receive-url').textContent())!;
    expect(new URL(receiveUrl).port).toBe(new URL(stack.apiUrl).port);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.consoleUrl });
    await shown.getByRole('button', { name: 'Copy URL' }).click();
    await expect(shown.getByRole('button', { name: 'Copied' })).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(receiveUrl);
    await snap(page, testInfo, '02-receive-url-shown-once');
    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await expect(shown).toBeHidden();
    const token = new URL(receiveUrl).pathname.split('/').pop()!;
    expect(await page.content()).not.toContain(token);

    const row = page
      .getByRole('table', { name: 'Sources' })
      .getByRole('row')
      .filter({ hasText: `Payments ${run}` });
    await expect(row.getByTestId('source-kind')).toHaveText('payments');
    await expect(row.getByTestId('source-status')).toHaveText('active');
    await expect(row.getByTestId('event-type-mapping')).toHaveText(`from /type prefixed ${typePrefix}`);
    await row.getByRole('link', { name: `Payments ${run}` }).click();
    await expect(page.getByRole('heading', { name: `Payments ${run}`, exact: true })).toBeVisible();
    await expect(field(page, 'Source settings', 'Verifier kind')).toContainText('payments');
    await expect(field(page, 'Secret and receive URL', 'Secret version')).toHaveText('1');
    for (const hidden of [secret, token]) expect(await page.content()).not.toContain(hidden);

    // The provider signs with the official library; the body's spacing is kept byte for byte.
    const payload = `{ "id": "evt_${run}", "object": "event", "type": "payment_intent.succeeded", "data": { "object": { "amount": 4200 } } }`;
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret });
    const answer = await postToReceiveUrl(stack, receiveUrl, payload, { 'stripe-signature': signature });
    expect(answer.status, answer.body).toBe(200);
    const captured = JSON.parse(answer.body) as { message_id: string; duplicate: boolean };
    expect(captured.duplicate).toBe(false);
    // Stripe's retry of the same event is a duplicate of the first capture.
    const again = await postToReceiveUrl(stack, receiveUrl, payload, { 'stripe-signature': signature });
    expect(JSON.parse(again.body)).toEqual({ message_id: captured.message_id, duplicate: true });

    const capture = page
      .getByRole('table', { name: 'Recent captures' })
      .locator(`tr[data-message-id="${captured.message_id}"]`);
    await reloadUntil(page, async () => {
      await expect(capture.getByTestId('message-status')).toHaveText('succeeded', { timeout: 1_000 });
    });
    await expect(capture).toContainText(eventType);
    await expect(capture.getByTestId('delivery-summary')).toHaveText('1 succeeded');
    await expect(page.getByRole('table', { name: 'Recent captures' }).locator('tbody tr')).toHaveCount(1);
    await snap(page, testInfo, '03-capture-delivered');
    expect(receiver.received.map((request) => request.body)).toEqual([payload]);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(captured.message_id);

    // The capture's message page names its source and links back.
    await capture.getByRole('link', { name: captured.message_id }).click();
    await expect(page).toHaveURL(new RegExp(`/messages/${captured.message_id}$`));
    await expect(field(page, 'Message fields', 'Origin')).toHaveText('source');
    await expect(page.getByTestId('message-status')).toHaveText('succeeded');
    await field(page, 'Message fields', 'Source').getByRole('link').click();
    await expect(page.getByRole('heading', { name: `Payments ${run}`, exact: true })).toBeVisible();
  } finally {
    await receiver.close();
  }
});

test('rotate the receive URL: the new one is shown once and both answer during the overlap; delete stops both', async ({
  signedIn: page,
  api,
  stack,
}, testInfo) => {
  const { run, tenant, typePrefix } = await setup(api, 'rot');
  const eventType = `${typePrefix}ping`;
  await api.createEventType(eventType);
  const created = await api.createSource({
    tenant_id: tenant.id,
    name: `Bearer ${run}`,
    verification: { kind: 'bearer' },
    event_type: eventType,
  });
  const bearer = { authorization: `Bearer ${created.secret!}` };
  const oldUrl = created.receive_url;

  await open(page, `/sources/${created.id}`);
  await expect(field(page, 'Secret and receive URL', 'Receive URL version')).toHaveText('1');
  await expect(page.getByTestId('token-overlap')).toHaveText('no: only the current URL');
  await expect(page.getByTestId('event-type-mapping')).toHaveText(eventType);

  await page.getByRole('button', { name: 'Rotate receive URL' }).click();
  const rotate = page.getByRole('dialog', { name: 'Rotate receive URL' });
  await expect(rotate.getByLabel('Overlap (seconds)')).toHaveValue('86400');
  await rotate.getByRole('button', { name: 'Rotate receive URL' }).click();

  const shown = page.getByRole('dialog', { name: 'New receive URL' });
  await expect(shown).toContainText('This receive URL is shown once; store it now. It cannot be shown again');
  await expect(shown.getByTestId('receive-url')).toHaveText(RECEIVE_URL);
  const newUrl = (await shown.getByTestId('receive-url').textContent())!;
  expect(newUrl).not.toBe(oldUrl);
  await expect(shown.getByTestId('previous-ends')).toHaveText(
    /^The previous receive URL keeps answering until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.$/,
  );
  await snap(page, testInfo, '01-new-url-shown-once');
  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await expect(shown).toBeHidden();
  await expect(field(page, 'Secret and receive URL', 'Receive URL version')).toHaveText('2');
  await expect(page.getByTestId('token-overlap')).toHaveText(/^until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  await reload(page);
  for (const url of [oldUrl, newUrl]) expect(await page.content()).not.toContain(new URL(url).pathname);

  // During the overlap both URLs capture.
  const viaOld = await postToReceiveUrl(stack, oldUrl, '{"via":"old"}', bearer);
  expect(viaOld.status, viaOld.body).toBe(200);
  const viaNew = await postToReceiveUrl(stack, newUrl, '{"via":"new"}', bearer);
  expect(viaNew.status, viaNew.body).toBe(200);
  const captures = page.getByRole('table', { name: 'Recent captures' });
  await reloadUntil(page, async () => {
    await expect(captures.locator('tbody tr[data-message-id]')).toHaveCount(2, { timeout: 1_000 });
  });
  const [oldId, newId] = [viaOld, viaNew].map(
    (answer) => (JSON.parse(answer.body) as { message_id: string }).message_id,
  );
  // Newest first.
  await expect(captures.locator('tbody tr').first()).toHaveAttribute('data-message-id', newId!);
  await expect(captures.locator('tbody tr').last()).toHaveAttribute('data-message-id', oldId!);
  await expect(captures.locator(`tr[data-message-id="${newId}"]`)).toContainText(eventType);

  // While that overlap runs, another rotation must retire it at once (overlap 0): anything else is refused.
  await page.getByRole('button', { name: 'Rotate receive URL' }).click();
  await expect(rotate.getByLabel('Overlap (seconds)')).toHaveValue('0');
  await expect(rotate.getByLabel('Overlap (seconds)')).toHaveAccessibleDescription(/only 0 is accepted/);
  await rotate.getByLabel('Overlap (seconds)').fill('60');
  await rotate.getByRole('button', { name: 'Rotate receive URL' }).click();
  await expect(rotate.getByRole('alert')).toContainText('Not rotated');
  await expect(rotate.getByRole('alert')).toContainText(/overlap/);
  await snap(page, testInfo, '02-second-rotation-refused');
  await rotate.getByRole('button', { name: 'Cancel' }).click();

  // Deleting says the URL stops answering at once, and it does: both URLs.
  await page.getByRole('button', { name: 'Delete' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete source' });
  await expect(confirm).toContainText('Its receive URL stops answering at once');
  await confirm.getByRole('button', { name: 'Delete source' }).click();
  await expect(page).toHaveURL(new RegExp(`/sources\\?tenant=${tenant.id}$`));
  await expect(page.getByRole('table', { name: 'Sources' })).toContainText('has no sources yet.');
  for (const url of [oldUrl, newUrl]) expect((await postToReceiveUrl(stack, url, '{}', bearer)).status).toBe(404);
});

test('a badly signed request shows under recent rejections with its reason; a paused source answers 503', async ({
  signedIn: page,
  api,
  stack,
}, testInfo) => {
  const { run, tenant, typePrefix } = await setup(api, 'rej');
  const eventType = `${typePrefix}charge`;
  await api.createEventType(eventType);
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  const created = await api.createSource({
    tenant_id: tenant.id,
    name: `Checked ${run}`,
    verification: { kind: 'payments', secret },
    event_type: eventType,
  });
  const payload = (n: number) => `{"id":"evt_${run}_${n}","type":"charge.succeeded"}`;
  const signed = (body: string, key: string) => ({
    'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: body, secret: key }),
  });

  // Signed with another secret: refused, and the answer echoes no signature.
  const forged = signed(payload(1), `whsec_${randomBytes(24).toString('hex')}`);
  for (let attempt = 0; attempt < 2; attempt++) {
    const refused = await postToReceiveUrl(stack, created.receive_url, payload(1), forged);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('bad_signature');
    expect(refused.body).not.toContain(forged['stripe-signature']);
  }

  await open(page, `/sources/${created.id}`);
  const rejections = page.getByRole('table', { name: 'Recent rejections' });
  const rejection = rejections.locator('tbody tr[data-event-id]');
  // Both requests fold into one rejection (they came within a minute), counted twice.
  await reloadUntil(page, async () => {
    await expect(rejection.getByTestId('rejection-count')).toHaveText('2', { timeout: 1_000 });
  });
  await expect(rejection).toHaveCount(1);
  await expect(rejection.getByTestId('rejection-reason')).toHaveText('bad_signature');
  await expect(rejection).toContainText('No active secret verifies the request');
  await expect(page.getByTestId('rejection-totals')).toHaveText('bad_signature: 2 requests');
  await expect(page.getByRole('table', { name: 'Recent captures' })).toContainText('Nothing captured yet.');
  await snap(page, testInfo, '01-rejections');

  // Paused: the provider is told to come back later, and nothing is verified or captured.
  await page.getByRole('button', { name: 'Pause' }).click();
  await expect(page.getByTestId('source-status')).toHaveText('paused');
  await expect(page.getByRole('alert').filter({ hasText: 'Retry-After: 60' })).toBeVisible();
  const paused = await fetch(`${stack.apiUrl}${new URL(created.receive_url).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signed(payload(2), secret) },
    body: payload(2),
  });
  expect(paused.status).toBe(503);
  expect(paused.headers.get('retry-after')).toBe('60');
  await snap(page, testInfo, '02-paused');

  await page.getByRole('button', { name: 'Resume' }).click();
  await expect(page.getByTestId('source-status')).toHaveText('active');
  const accepted = await postToReceiveUrl(stack, created.receive_url, payload(2), signed(payload(2), secret));
  expect(accepted.status, accepted.body).toBe(200);
  await reloadUntil(page, async () => {
    await expect(page.getByRole('table', { name: 'Recent captures' }).locator('tbody tr[data-message-id]')).toHaveCount(
      1,
      { timeout: 1_000 },
    );
  });

  // The events feed has the same rejection, linked from the card.
  await page.getByRole('link', { name: 'In the events feed' }).click();
  await expect(page).toHaveURL(new RegExp(`resource=${created.id}`));
  const event = page.getByRole('table', { name: 'Operational events' }).locator('tbody tr').first();
  await expect(event).toContainText('webhooks.source.rejected');
  await expect(event.getByTestId('event-data')).toContainText('reason: bad_signature');
  await expect(event.getByTestId('event-data').getByRole('link', { name: created.id })).toBeVisible();
});

test('a standard webhooks source: its generated secret is shown once, rotated with an overlap, and edits keep it', async ({
  signedIn: page,
  api,
  stack,
}, testInfo) => {
  const { run, tenant, tenantName, typePrefix } = await setup(api, 'std');
  await api.createEventType(`${typePrefix}created`);
  await api.createEventType(`${typePrefix}renamed.created`);

  await open(page, `/sources?tenant=${tenant.id}`);
  await page.getByRole('button', { name: 'New source' }).click();
  const form = page.getByRole('dialog', { name: 'New source' });
  await form.getByRole('textbox', { name: 'Name' }).fill(`Standard ${run}`);
  await form.getByRole('textbox', { name: 'Verifier kind' }).click();
  await page.getByRole('option', { name: 'standard_webhooks', exact: true }).click();
  await expect(form.getByLabel('Secret')).toHaveAccessibleDescription(/leave it empty and a secret is generated/i);
  await form.getByRole('textbox', { name: 'Event type', exact: true }).fill(`${typePrefix}created`);
  await page.getByRole('option', { name: `${typePrefix}created`, exact: true }).click();
  await form.getByRole('button', { name: 'Create source' }).click();

  // Both the receive URL and the generated secret are shown, once.
  const shown = page.getByRole('dialog', { name: 'Source created' });
  await expect(shown).toContainText('The receive URL and the secret are shown once. They cannot be shown again.');
  await expect(shown.getByTestId('receive-url')).toHaveText(RECEIVE_URL);
  await expect(shown.getByTestId('source-secret')).toHaveText(/^whsec_[A-Za-z0-9+/=]+$/);
  const receiveUrl = (await shown.getByTestId('receive-url').textContent())!;
  const secret = (await shown.getByTestId('source-secret').textContent())!;
  await snap(page, testInfo, '01-url-and-secret-shown-once');
  await shown.getByRole('button', { name: 'I have stored it' }).click();
  await expect(shown).toBeHidden();
  expect(await page.content()).not.toContain(secret);

  /** Signed with the official standardwebhooks library, as a Standard Webhooks sender signs. */
  const send = (key: string, id: string, body = `{"n":"${id}"}`) => {
    const at = new Date(Math.floor(Date.now() / 1000) * 1000);
    return postToReceiveUrl(stack, receiveUrl, body, {
      'webhook-id': id,
      'webhook-timestamp': String(at.getTime() / 1000),
      'webhook-signature': new Webhook(key).sign(id, at, body),
    });
  };
  expect((await send(secret, `msg_${run}_1`)).status).toBe(200);

  // Rotating makes a new secret, shown once; the old one keeps verifying during the overlap.
  await page
    .getByRole('table', { name: 'Sources' })
    .getByRole('link', { name: `Standard ${run}` })
    .click();
  await expect(page.getByRole('heading', { name: `Standard ${run}`, exact: true })).toBeVisible();
  await page.waitForLoadState('networkidle');
  await page.getByRole('button', { name: 'Rotate secret' }).click();
  const rotate = page.getByRole('dialog', { name: 'Rotate secret' });
  await rotate.getByLabel('Overlap (seconds)').fill('3600');
  await rotate.getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = page.getByRole('dialog', { name: 'New secret' });
  await expect(rotated).toContainText('This secret is shown once; store it now. It cannot be shown again.');
  await expect(rotated.getByTestId('receive-url')).toHaveCount(0);
  const newSecret = (await rotated.getByTestId('source-secret').textContent())!;
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(secret);
  await expect(rotated.getByTestId('previous-ends')).toContainText('The previous secret keeps verifying until');
  await rotated.getByRole('button', { name: 'I have stored it' }).click();
  await expect(field(page, 'Secret and receive URL', 'Secret version')).toHaveText('2');
  await expect(page.getByTestId('secret-overlap')).toHaveText(/^until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
  expect((await send(secret, `msg_${run}_2`)).status).toBe(200);
  expect((await send(newSecret, `msg_${run}_3`)).status).toBe(200);

  // Edit the name and switch the mapping to a path with a prefix; the secret and URL are untouched.
  await page.getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('dialog', { name: `Edit source Standard ${run}` });
  await edit.getByRole('textbox', { name: 'Name' }).fill(`Renamed ${run}`);
  await edit.getByText('From the body', { exact: true }).click();
  await edit.getByRole('textbox', { name: 'Event type path' }).fill('/kind');
  await edit.getByRole('textbox', { name: 'Event type prefix' }).fill(`${typePrefix}renamed.`);
  await edit.getByRole('button', { name: 'Save' }).click();
  await expect(edit).toBeHidden();
  // exact: while the edit dialog fades out, its title ("Edit source Renamed ...") is still a heading.
  await expect(page.getByRole('heading', { name: `Renamed ${run}`, exact: true })).toBeVisible();
  await expect(field(page, 'Source settings', 'Event type')).toHaveText(`from /kind prefixed ${typePrefix}renamed.`);
  await expect(page.getByRole('link', { name: `${tenantName} sources` })).toBeVisible();
  await snap(page, testInfo, '02-renamed');
  const mapped = await send(newSecret, `msg_${run}_4`, '{"kind":"created"}');
  expect(mapped.status, mapped.body).toBe(200);
  const { message_id: messageId } = JSON.parse(mapped.body) as { message_id: string };
  const capture = page.getByRole('table', { name: 'Recent captures' }).locator(`tr[data-message-id="${messageId}"]`);
  await reloadUntil(page, async () => {
    await expect(capture).toContainText(`${typePrefix}renamed.created`, { timeout: 1_000 });
  });
});
