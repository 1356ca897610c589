/**
 * Preloaded by `npm run bench` into the server and worker processes it starts (bundled beside the built entry points:
 * `node --enable-source-maps --import .../bench-probe.js .../server.js`), so the production code runs unchanged. It counts the Postgres
 * round trips the process makes (every node-postgres query, BEGIN and COMMIT included, grouped by the statement's
 * first words) and, on request, records a CPU profile. It answers on 127.0.0.1:BENCH_PROBE_PORT:
 *
 *   GET  /stats            {"round_trips": n, "statements": {"<first words>": n, ...}}
 *   POST /profile/start    starts the V8 CPU profiler
 *   POST /profile/stop     stops it and answers the .cpuprofile JSON
 *
 * This is a benchmark harness, not part of the service: it reads its port from the environment itself.
 */
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import pg from 'pg';

const statements = new Map<string, number>();
let roundTrips = 0;

/** The statement's kind and table: enough to tell the hot-path statements apart, never parameter values. */
function statementKey(text: string): string {
  const words = text.replace(/\s+/g, ' ').trim().slice(0, 90);
  return words.length === 0 ? '(empty)' : words;
}

/**
 * Keys by statement text, made once: the hot statements are a few fixed texts of several KB, and squeezing their
 * whitespace on every query was 1.3% of the worker's samples, counted in the CPU per message the bench reports.
 * Texts made per call (rare here) are bounded by KEY_CACHE_ENTRIES.
 */
const keys = new Map<string, string>();
const KEY_CACHE_ENTRIES = 10_000;
function cachedKey(text: string): string {
  let key = keys.get(text);
  if (key === undefined) {
    key = statementKey(text);
    if (keys.size >= KEY_CACHE_ENTRIES) keys.clear();
    keys.set(text, key);
  }
  return key;
}

const prototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const original = prototype.query;
prototype.query = function countedQuery(this: unknown, ...args: unknown[]) {
  roundTrips += 1;
  const first = args[0];
  const text = typeof first === 'string' ? first : ((first as { text?: string } | null)?.text ?? '');
  const key = cachedKey(text);
  statements.set(key, (statements.get(key) ?? 0) + 1);
  return original.apply(this, args);
};

const port = Number(process.env['BENCH_PROBE_PORT']);
if (port > 0) {
  let session: Session | null = null;
  const server = http.createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    void (async () => {
      if (request.method === 'GET' && request.url === '/stats')
        return answer(200, { round_trips: roundTrips, statements: Object.fromEntries(statements) });
      if (request.method === 'POST' && request.url === '/profile/start') {
        session = new Session();
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: 500 });
        await session.post('Profiler.start');
        return answer(200, { started: true });
      }
      if (request.method === 'POST' && request.url === '/profile/stop' && session) {
        const { profile } = await session.post('Profiler.stop');
        session.disconnect();
        session = null;
        return answer(200, profile);
      }
      return answer(404, { error: 'not_found' });
    })().catch((error: unknown) => answer(500, { error: String(error) }));
  });
  server.listen(port, '127.0.0.1');
  // The probe must never keep a stopping process alive.
  server.unref();
}
