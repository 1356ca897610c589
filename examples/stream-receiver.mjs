// A stream endpoint's receiver in plain Node 20, without the client (docs/streams.md, "A receiver in plain Node"):
// it connects to the stream, hands each delivery to `handle` and acknowledges it with the status `handle` gives.
//
//   SVC_URL=http://localhost:8080 ENDPOINT_ID=wde_... SVC_STREAM_TOKEN=whst_... node examples/stream-receiver.mjs
const base = `${process.env.SVC_URL ?? 'http://localhost:8080'}/v1/endpoints/${process.env.ENDPOINT_ID}`;
const auth = { authorization: `Bearer ${process.env.SVC_STREAM_TOKEN}` };
// Your handler: the headers and the exact body bytes in (verify them as for push), an HTTP status out (2xx settles).
const handle = async (headers, body) => (console.log(headers['webhook-id'], body.toString()), 200);
for (;;) {
  const res = await fetch(`${base}/stream`, { headers: auth }).catch(() => null);
  if (res?.status === 401) throw new Error('the stream token was refused');
  let buffer = '';
  try {
    for await (const chunk of res?.body?.pipeThrough(new TextDecoderStream()) ?? []) {
      const events = (buffer += chunk).split('\n\n');
      buffer = events.pop();
      for (const event of events) {
        const field = (name) => event.match(new RegExp(`^${name}: (.*)$`, 'm'))?.[1];
        if (field('event') !== 'delivery') continue;
        const d = JSON.parse(field('data'));
        const body = d.body_base64 === undefined ? Buffer.from(d.body) : Buffer.from(d.body_base64, 'base64');
        const status = await handle(d.headers, body).catch(() => 'error');
        const ack = { acks: [{ delivery_id: d.delivery_id, attempt: d.attempt, status }] };
        const headers = { ...auth, 'content-type': 'application/json' };
        await fetch(`${base}/stream/acks`, { method: 'POST', headers, body: JSON.stringify(ack) });
      }
    }
  } catch {
    // The connection broke: what was not acknowledged comes again on the next one.
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
}
