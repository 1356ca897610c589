import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CreateEndpointInput, CreateTenantInput, parseInput, type CallContext, type Services } from '@svc/core';
import { ensureDatabase, runMigrations, startEmbeddedPostgres } from '@svc/db';

export interface BenchDatabase {
  databaseUrl: string;
  /** Stops the cluster and removes its files. */
  stop(): Promise<void>;
}

/** A benchmark's own Postgres: an embedded cluster in a temporary directory with one migrated database, `bench_<name>`. */
export async function startBenchDatabase(name: string): Promise<BenchDatabase> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `svc-bench-${name}-`));
  const cluster = await startEmbeddedPostgres({ dataDir, persistent: false });
  const stop = async () => {
    await cluster.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const databaseUrl = cluster.url.replace(/\/postgres$/, `/bench_${name}`);
  try {
    await ensureDatabase(databaseUrl);
    await runMigrations(databaseUrl);
  } catch (error) {
    await stop();
    throw error;
  }
  return { databaseUrl, stop };
}

/** The benchmark team's tenant `bench` with one endpoint (never called: its URL is example.com). */
export async function createBenchEndpoint(
  services: Services,
  ctx: CallContext,
): Promise<{ tenantId: string; endpointId: string }> {
  const tenant = await services.tenants.createTenant(
    ctx,
    parseInput(CreateTenantInput, { external_id: 'bench', name: 'Bench' }),
  );
  const endpoint = await services.endpoints.createEndpoint(
    ctx,
    parseInput(CreateEndpointInput, { tenant_id: tenant.id, url: 'https://example.com/bench' }),
  );
  return { tenantId: tenant.id, endpointId: endpoint.endpoint.id };
}
