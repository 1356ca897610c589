// A tiny webhook receiver (README: "Your first webhook"). It verifies every delivery with the `standardwebhooks`
// package (any Standard Webhooks library does the same), answers 204 to what verifies and 401 to anything else, and
// prints one line per request. A GET answers 200, to check that it runs.
//
//   WEBHOOK_SECRET=whsec_... PORT=4000 node examples/receiver.mjs
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith('whsec_')) {
  console.error("Set WEBHOOK_SECRET to the endpoint's signing_secret (whsec_...)");
  process.exit(2);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT ?? 4000);
// Deliveries can repeat (a retry after a lost answer) and arrive out of order: webhook-id names the message.
const seen = new Set();

const server = http.createServer((request, response) => {
  if (request.method !== 'POST') return void response.writeHead(200).end('receiver is running\n');
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    // The exact bytes received, never a re-serialised copy: the signature covers them.
    const body = Buffer.concat(chunks);
    try {
      webhook.verify(body, request.headers);
    } catch (error) {
      console.log(`rejected: ${error.message}`);
      return void response.writeHead(401).end();
    }
    const id = request.headers['webhook-id'];
    if (seen.has(id)) console.log(`duplicate ${id} (already handled)`);
    else {
      seen.add(id);
      console.log(`verified ${id} ${request.headers['svc-event-type']} ${body}`);
    }
    response.writeHead(204).end();
  });
});
server.listen(port, '127.0.0.1', () => console.log(`receiver listening on http://127.0.0.1:${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
