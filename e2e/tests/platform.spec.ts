import { verifyAsSpecSays } from '../../packages/signing/src/testing/spec-verifier';
import { expect, open, reload, test, unique } from '../support/fixtures';
import { startReceiver, type Received } from '../support/receiver';

/**
 * Feature flags and event subscriptions in the console: a flag toggled in the console reaches a loopback receiver
 * as a signed feature_flags.flag.updated event, and the subscription's delivery history shows it with its attempt.
 */
interface EventBody {
  id: string;
  type: string;
  environment_id: string | null;
  revision: string | null;
  sequence: number;
  data: Record<string, unknown>;
}

const bodyOf = (request: Received) => JSON.parse(request.body) as EventBody;

test('toggle a flag in the console: the signed event reaches the receiver and the delivery history', async ({
  signedIn: page,
}) => {
  const receiver = await startReceiver(204);
  try {
    const run = unique();
    const environment = `prod-${run}`;
    const key = `checkout.${run}`;

    // An environment and a flag, in the console.
    await open(page, '/feature-flags');
    await page.getByLabel('New environment').fill(environment);
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('link', { name: environment, exact: true }).click();
    await expect(page.getByTestId('environment-revision')).toHaveText('Revision 0');
    await page.waitForLoadState('networkidle');
    await page.getByRole('button', { name: 'New flag' }).click();
    await page.getByLabel('Key').fill(key);
    await page.getByLabel('Value').fill('{"rollout": 10}');
    await page.getByRole('button', { name: 'Create flag' }).click();
    await expect(page.getByTestId(`flag-${key}`)).toContainText('{"rollout":10}');
    await expect(page.getByTestId('environment-revision')).toHaveText('Revision 1');
    const environmentId = new URL(page.url()).pathname.split('/').pop()!;

    // A subscription of that environment, in the console: the secret is shown once.
    await open(page, '/event-subscriptions');
    await page.getByRole('button', { name: 'New subscription' }).click();
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('Description').fill(`flags ${run}`);
    await page.getByRole('textbox', { name: 'Environments' }).click();
    await page.getByRole('option', { name: environment, exact: true }).click();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    const secret = (await page.getByTestId('subscription-secret').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await expect(page.getByTestId('subscription-secret')).toHaveCount(0);

    // Toggle the flag: one event, signed, in the standard format.
    await open(page, `/feature-flags/${environmentId}`);
    // Mantine draws the switch over its (hidden) input: the click goes to the input itself.
    await page.getByLabel(`Enabled: ${key}`).check({ force: true });
    await expect(page.getByTestId('environment-revision')).toHaveText('Revision 2');
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(1);
    const [request] = receiver.received;
    const signature = String(request!.headers['svc-signature']);
    expect(verifyAsSpecSays(secret, signature, Buffer.from(request!.body, 'utf8'), Math.floor(Date.now() / 1000))).toBe(
      true,
    );
    const event = bodyOf(request!);
    expect(request!.headers['svc-event-id']).toBe(event.id);
    expect(event).toMatchObject({
      type: 'feature_flags.flag.updated',
      environment_id: environmentId,
      revision: '2',
      sequence: 1,
      data: { flag_key: key, change: 'updated', changed_fields: ['enabled'] },
    });
    expect(request!.body).not.toContain('rollout');

    // The delivery history shows it delivered, with its attempt.
    await open(page, '/event-subscriptions');
    await page.getByRole('link', { name: `flags ${run}` }).click();
    await page.waitForURL(/\/event-subscriptions\/whe_/);
    await expect(async () => {
      await reload(page);
      await expect(page.getByRole('table', { name: 'Deliveries' })).toContainText('succeeded', { timeout: 1000 });
    }).toPass({ timeout: 20_000 });
    const row = page.getByRole('table', { name: 'Deliveries' }).getByRole('row').filter({ hasText: event.id });
    await expect(row).toContainText('feature_flags.flag.updated');
    await row.getByRole('button', { name: /^Attempts of / }).click();
    const attempts = page.getByRole('table', { name: /^Attempts of / });
    await expect(attempts).toContainText('204');
    await expect(attempts).toContainText('acknowledged');

    // A test event, then a manual retry of the flag event: the receiver gets both, the retry with the same event ID.
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(2);
    expect(bodyOf(receiver.received[1]!)).toMatchObject({ type: 'feature_flags.webhook.test', sequence: 2 });
    await row.getByRole('button', { name: /^Retry / }).click();
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(3);
    expect(receiver.received[2]!.headers['svc-event-id']).toBe(event.id);
    expect(bodyOf(receiver.received[2]!).sequence).toBe(1);
    await expect(async () => {
      await reload(page);
      await expect(page.getByRole('table', { name: 'Deliveries' })).toContainText('manual retry', { timeout: 1000 });
    }).toPass({ timeout: 20_000 });
  } finally {
    await receiver.close();
  }
});
