import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, open, reload, snap, test, unique } from '../support/fixtures';
import { startReceiver } from '../support/receiver';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The stream takes a delivery within seconds; this allows for a slow machine (and npm starting tsx). */
const DELIVERY_TIMEOUT_MS = 30_000;

test('a stream endpoint: created in the console, a token made, the copied listen command run, a message arrives and succeeds', async ({
  signedIn: page,
  api,
}, testInfo) => {
  const receiver = await startReceiver(200);
  let listener: ReturnType<typeof spawn> | undefined;
  try {
    const run = `st-${unique()}`;
    const tenant = await api.createTenant(run, `Tenant ${run}`);
    const eventType = `order.streamed${run.replace(/[^a-z0-9]/g, '')}`;
    await api.createEventType(eventType, 'An order, streamed');

    // Create: stream, so there is no URL to give.
    await open(page, `/tenants/${tenant.id}/endpoints`);
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await form.getByRole('radiogroup', { name: 'Delivery' }).getByText('Stream').click();
    await expect(form.getByLabel('URL')).toHaveCount(0);
    await form.getByLabel('Name').fill(`Laptop ${run}`);
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    const secretDialog = page.getByRole('dialog', { name: 'Signing secret', exact: true });
    await secretDialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('link', { name: `Laptop ${run}` }).click();
    await expect(page).toHaveURL(/\/endpoints\/wde_/);
    const endpointId = page.url().split('/endpoints/')[1]!;

    // The page shows the command (with a placeholder), no connection and no token yet.
    await expect(page.getByTestId('listen-command')).toContainText(`--endpoint ${endpointId} --token <whst_...>`);
    await expect(page.getByRole('table', { name: 'Open stream connections' })).toContainText('No receiver');

    // A token, shown once, in the command to copy.
    await page.getByRole('button', { name: 'Create token' }).click();
    const tokenForm = page.getByRole('dialog', { name: 'New stream token' });
    await tokenForm.getByLabel('Name').fill('e2e laptop');
    await tokenForm.getByRole('button', { name: 'Create token' }).click();
    const reveal = page.getByRole('dialog', { name: 'Stream token' });
    await expect(reveal.getByTestId('stream-token')).toHaveText(/^whst_[A-Za-z0-9_-]{43}$/);
    const command = (await reveal.getByTestId('listen-command-with-token').textContent()) ?? '';
    await reveal.getByRole('button', { name: 'Copy command' }).click();
    await expect(reveal.getByRole('button', { name: 'Copied' })).toBeVisible();
    await snap(page, testInfo, '1-token-and-command');
    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await expect(page.getByRole('table', { name: 'Stream tokens' })).toContainText('e2e laptop');

    // Run it as a developer would, forwarding to this test's receiver instead of the command's example port.
    expect(command).toMatch(/^npm run listen -- --endpoint wde_\S+ --token whst_\S+ --forward \S+ --server \S+$/);
    const args = command.replace(/^npm run listen -- /, '').replace(/--forward \S+/, `--forward ${receiver.url}`);
    let output = '';
    listener = spawn('npm', ['run', '-s', 'listen', '--', ...args.split(' ')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Ctrl-C reaches every process of the terminal's group: npm and the tsx under it.
      detached: true,
    });
    listener.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    listener.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => listener!.on('exit', (code) => resolve(code)));
    await expect.poll(() => output, { timeout: DELIVERY_TIMEOUT_MS }).toContain('connected to');

    // The console lists the connection.
    await reload(page);
    await expect(page.getByRole('table', { name: 'Open stream connections' })).toContainText('e2e laptop');

    const message = await api.publishMessage({ tenant_id: tenant.id, event_type: eventType }, '{"order":7}');
    await expect
      .poll(() => receiver.received.filter((r) => r.headers['webhook-id'] === message.id).length, {
        timeout: DELIVERY_TIMEOUT_MS,
      })
      .toBe(1);
    expect(receiver.received.find((r) => r.headers['webhook-id'] === message.id)!.body).toBe('{"order":7}');
    await expect.poll(() => output, { timeout: DELIVERY_TIMEOUT_MS }).toMatch(new RegExp(`${eventType} .*-> 200`));

    // Acknowledged: the message shows succeeded in the console.
    await expect
      .poll(
        async () => {
          await open(page, `/messages/${message.id}`);
          return page.getByText('succeeded').first().isVisible();
        },
        { timeout: DELIVERY_TIMEOUT_MS },
      )
      .toBe(true);
    await snap(page, testInfo, '2-succeeded');

    process.kill(-listener.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    expect(output).not.toMatch(/\n\s+at /);
  } finally {
    // A failed test leaves the command running: its whole group goes (it may be gone already).
    if (listener && listener.exitCode === null && listener.signalCode === null)
      try {
        process.kill(-listener.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    await receiver.close();
  }
});
