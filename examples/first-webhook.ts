// README "Your first webhook", in TypeScript with @svc/client: a tenant, an event type, an endpoint whose receiver
// (started here) verifies each delivery, a message published and watched until delivered, the tenant's messages
// listed page by page, and a typed error. Run it from the checkout, with `npm start` running:
//
//   KEY=svc_sk_... npx tsx examples/first-webhook.ts
//
// Every POST carries a fixed Idempotency-Key, so running it again (or after the curl walkthrough) answers with what
// the first run made instead of 409. Its tenant and endpoint are its own ("acme-ts", a receiver on port 4001): the
// curl walkthrough's endpoint on port 4000 does not get its message. SVC_API_URL (default
// http://localhost:8080/v1) and RECEIVER_PORT (default 4001) change where it talks and listens.
import http from 'node:http';
import { createClient, SvcApiError, verify } from '@svc/client';

const key = process.env['KEY'];
if (!key?.startsWith('svc_sk_')) throw new Error('Set KEY to a secret key (svc_sk_...), as npm start printed it');
const svc = createClient({ baseUrl: process.env['SVC_API_URL'] ?? 'http://localhost:8080/v1', key });
const receiverPort = Number(process.env['RECEIVER_PORT'] ?? 4001);
const fixedKey = (name: string) => ({ header: { 'Idempotency-Key': name } });

// The tenant, and the event type of the curl walkthrough (the same key and body: the same event type).
const { data: tenant } = await svc.POST('/tenants', {
  params: fixedKey('first-tenant-ts'),
  body: { external_id: 'acme-ts', name: 'Acme Inc (TypeScript)' },
});
await svc.POST('/event_types', {
  params: fixedKey('first-event-type'),
  body: { name: 'invoice.paid', description: 'An invoice was paid' },
});

// The endpoint: its signing_secret is shown when it is made (and to the same key on an idempotent replay).
const { data: endpoint } = await svc.POST('/endpoints', {
  params: fixedKey('first-endpoint-ts'),
  body: { tenant_id: tenant.id, url: `http://127.0.0.1:${receiverPort}/webhooks`, events: ['invoice.paid'] },
});
const secret = endpoint.signing_secret;
if (!secret) throw new Error('the endpoint was made by another key: its signing secret is not shown to this one');

// The receiver: the exact bytes received, the headers and the secret; verify throws when they do not match.
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      const { id } = verify(request.headers, body, secret);
      console.log(`verified ${id} ${request.headers['svc-event-type']} ${body}`);
      response.writeHead(204).end();
    } catch (error) {
      console.log(`rejected: ${(error as Error).message}`);
      response.writeHead(401).end();
    }
  });
});
await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));

try {
  // Publish: 202 once the message, its delivery and its charge are stored.
  const { data: message } = await svc.POST('/messages', {
    params: fixedKey('first-message-ts'),
    body: { tenant_id: tenant.id, event_type: 'invoice.paid', payload: { invoice: 'in_1002', amount: '25.00' } },
  });

  // Read it until it is delivered (a run after the first finds it delivered already).
  let status = message.status;
  for (let i = 0; i < 30 && status !== 'succeeded'; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    status = (await svc.GET('/messages/{id}', { params: { path: { id: message.id } } })).data.status;
  }
  console.log(`${message.id}: ${status}`);

  // Every message of the tenant, two per page: svc.list follows next_cursor.
  for await (const each of svc.list('/messages', { params: { query: { tenant_id: tenant.id, limit: 2 } } }))
    console.log(`listed ${each.id} ${each.event_type} ${each.status}`);

  // Errors are typed: the API's code, the status and the Request-Id to quote to support.
  try {
    await svc.GET('/messages/{id}', { params: { path: { id: 'wdm_0000000000000000000000000' } } });
  } catch (error) {
    if (!(error instanceof SvcApiError)) throw error;
    console.log(`error ${error.status} ${error.code} (Request-Id ${error.requestId})`);
  }
} finally {
  receiver.close();
}
