import { createPublicKey, verify } from 'node:crypto';
import { expect, open, reload, snap, test, unique } from '../support/fixtures';
import { startReceiver, type Received } from '../support/receiver';

/** Deliveries need the worker's engine: a delivery settles within seconds, this allows for a slow machine. */
const DELIVERY_TIMEOUT_MS = 20_000;

/** A receiver's v1a check with the whpk_ public key alone (Node's crypto, nothing of ours). */
function verifiesWith(publicKey: string, delivery: Received): boolean {
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({
    key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]),
    format: 'der',
    type: 'spki',
  });
  const content = Buffer.from(
    `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.${delivery.body}`,
  );
  return String(delivery.headers['webhook-signature'])
    .split(' ')
    .filter((entry) => entry.startsWith('v1a,'))
    .some((entry) => verify(null, content, key, Buffer.from(entry.slice(4), 'base64')));
}

test('an ed25519 endpoint: created in the console, its public key shown with how to verify, and a delivery verifies with it', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    const run = `ed-${unique()}`;
    const tenant = await api.createTenant(run, `Tenant ${run}`);
    const eventType = `order.signed${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType, 'An order, signed with ed25519');
    await open(page, `/tenants/${tenant.id}/endpoints`);
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await form.getByLabel('URL').fill(receiver.url);
    await form.getByLabel('Name').fill(`Signed ${run}`);
    await form.getByRole('radiogroup', { name: 'Signatures' }).getByText('Ed25519 (public key)').click();
    await snap(page, testInfo, '1-create-ed25519');
    await form.getByRole('button', { name: 'Create endpoint' }).click();

    // No secret to store: the endpoint's page opens with the public key and the verification snippets.
    await expect(page).toHaveURL(/\/endpoints\/wde_/);
    await expect(page.getByRole('dialog', { name: 'Signing secret' })).toBeHidden();
    await expect(page.getByTestId('signature-scheme')).toHaveText('ed25519 (v1a)');
    const publicKey = (await page.getByTestId('public-key').textContent()) ?? '';
    expect(publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    await expect(page.getByTestId('verify-node')).toContainText(publicKey);
    await page.getByRole('tab', { name: 'Python' }).click();
    await expect(page.getByTestId('verify-python')).toContainText('Ed25519PublicKey.from_public_bytes');
    await page.getByRole('tab', { name: 'Go' }).click();
    await expect(page.getByTestId('verify-go')).toContainText('ed25519.Verify');
    await expect(page.locator('body')).not.toContainText('whsk_');
    await snap(page, testInfo, '2-public-key');

    const endpointId = page.url().split('/endpoints/')[1]!;
    /** Publishes an order and answers its one delivery, as the receiver got it. */
    const deliveredOrder = async (order: number) => {
      const message = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, `{"order":${order}}`);
      await expect
        .poll(() => receiver.received.filter((r) => r.headers['webhook-id'] === message.id).length, {
          timeout: DELIVERY_TIMEOUT_MS,
        })
        .toBe(1);
      return receiver.received.find((r) => r.headers['webhook-id'] === message.id)!;
    };
    const delivery = await deliveredOrder(42);
    expect(verifiesWith(publicKey, delivery)).toBe(true);
    expect(verifiesWith(publicKey, { ...delivery, body: '{"order":43}' })).toBe(false);

    // A new ed25519 key with an overlap: the previous key still signs until the overlap ends, so the page shows its
    // public key beside the new one, with when it stops, and a delivery meanwhile verifies with either.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const toNewKey = page.getByRole('dialog', { name: 'Rotate signing secret' });
    await toNewKey.getByRole('radiogroup', { name: 'Signatures' }).getByText('Ed25519 (public key)').click();
    await toNewKey.getByLabel('Overlap (seconds)').fill('3600');
    await toNewKey.getByRole('button', { name: 'Rotate secret' }).click();
    await expect(toNewKey).toBeHidden();
    await reload(page);
    const newKey = (await page.getByTestId('public-key').textContent()) ?? '';
    expect(newKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(newKey).not.toBe(publicKey);
    await expect(page.getByTestId('previous-public-key')).toContainText('The previous public key still signs until');
    await expect(page.getByTestId('old-public-key')).toHaveText(publicKey);
    await snap(page, testInfo, '3-previous-public-key');
    const signedTwice = await deliveredOrder(44);
    expect(verifiesWith(publicKey, signedTwice)).toBe(true);
    expect(verifiesWith(newKey, signedTwice)).toBe(true);

    // Rotating back to HMAC shows the new secret once; the public keys go away.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate signing secret' });
    await rotate.getByRole('radiogroup', { name: 'Signatures' }).getByText('HMAC (shared secret)').click();
    await rotate.getByLabel('Overlap (seconds)').fill('0');
    await rotate.getByRole('button', { name: 'Rotate secret' }).click();
    const reveal = page.getByRole('dialog', { name: 'Signing secret', exact: true });
    await expect(reveal.getByTestId('signing-secret')).toHaveText(/^whsec_\S+$/);
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await reload(page);
    await expect(page.getByTestId('signature-scheme')).toHaveText('HMAC (v1)');
    await expect(page.getByTestId('public-key')).toHaveCount(0);
    await expect(page.getByTestId('previous-public-key')).toHaveCount(0);
    expect(endpointId).toMatch(/^wde_/);
  } finally {
    await receiver.close();
  }
});

test('a failing endpoint: its circuit history shows when it opened, why, and when it recovered', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(500);
  try {
    const run = `circ-${unique()}`;
    const tenant = await api.createTenant(run, `Tenant ${run}`);
    const eventType = `order.failing${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType, 'An order to a failing receiver');
    const endpoint = await api.createEndpoint({
      tenant_id: tenant.id,
      url: receiver.url,
      name: `Failing ${run}`,
      retry_delays_seconds: [],
    });
    // Ten failures in a row open the circuit.
    for (let i = 0; i < 10; i += 1)
      await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, `{"n":${i}}`);
    await expect.poll(() => receiver.received.length, { timeout: DELIVERY_TIMEOUT_MS }).toBe(10);

    await open(page, `/endpoints/${endpoint.id}`);
    const history = page.getByRole('table', { name: 'Circuit history' });
    await expect(async () => {
      await reload(page);
      await expect(history).toContainText('circuit opened', { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(history).toContainText('10 failures in a row, last http_500');
    await snap(page, testInfo, '1-circuit-opened');

    // Resume half-opens the circuit: the next delivery goes at once as the probe, and the fixed receiver closes it.
    receiver.answerWith(204);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect(page.getByRole('table', { name: 'Endpoint health' })).toContainText('half open');
    await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"n":"probe"}');
    await expect(async () => {
      await reload(page);
      await expect(history).toContainText('recovered', { timeout: 1_000 });
    }).toPass({ timeout: DELIVERY_TIMEOUT_MS });
    await expect(history).toContainText('after 10 failures, last http_500');
    await snap(page, testInfo, '2-recovered');
  } finally {
    await receiver.close();
  }
});
