/**
 * The load generator of `npm run bench`, run as its own process so the server under test does not share a
 * CPU thread with its client. Reads a JSON job from argv[2], prints `{"rate": <requests per second>}`.
 */
interface LoadJob {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Request bodies: `{i}` is replaced by a unique number per request. */
  bodyTemplate?: string;
  /** Headers whose values get the same `{i}` substitution (e.g. Idempotency-Key). */
  uniqueHeaders?: string[];
  /** One Authorization value per worker, when workers act as different teams. */
  workerAuthorizations?: string[];
  expectStatus: number;
  concurrency: number;
  durationMs: number;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
  let done = 0;
  const started = Date.now();
  const deadline = started + job.durationMs;
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, worker) => {
      for (let i = 0; Date.now() < deadline; i += 1) {
        const unique = `${process.pid}-${worker}-${i}`;
        const headers = { ...job.headers };
        for (const name of job.uniqueHeaders ?? []) headers[name] = headers[name]!.replace('{i}', unique);
        const authorization = job.workerAuthorizations?.[worker];
        if (authorization) headers['authorization'] = authorization;
        const response = await fetch(job.url, {
          method: job.method,
          headers,
          body: job.bodyTemplate?.replaceAll('{i}', unique),
        });
        const answer = await response.text();
        if (response.status !== job.expectStatus)
          throw new Error(`${job.method} ${job.url} answered ${response.status}: ${answer.slice(0, 300)}`);
        done += 1;
      }
    }),
  );
  console.log(JSON.stringify({ rate: done / ((Date.now() - started) / 1000) }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
