import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import {
  ENVIRONMENTS_PAGE_SIZE,
  FLAGS_PAGE_SIZE,
  type Environment,
  type EnvironmentPage,
  type Flag,
  type FlagInput,
  type FlagPage,
} from './flag.types';

const ENVIRONMENT_FIELDS = 'id name revision etag createdAt updatedAt';
const FLAG_FIELDS = 'environmentId key enabled description value version revision etag updatedBy updatedAt';

export async function listEnvironments(after: string | null): Promise<EnvironmentPage> {
  const data = await consoleRequest<{ featureFlagEnvironments: EnvironmentPage }>(
    `query Environments($first: Int, $after: String) {
      featureFlagEnvironments(first: $first, after: $after) { nodes { ${ENVIRONMENT_FIELDS} } nextCursor }
    }`,
    { first: ENVIRONMENTS_PAGE_SIZE, ...(after ? { after } : {}) },
  );
  return data.featureFlagEnvironments;
}

/** Every environment, for pickers (at most a few pages: a team has at most 50). */
export async function listAllEnvironments(): Promise<Environment[]> {
  const all: Environment[] = [];
  let after: string | null = null;
  do {
    const page: EnvironmentPage = await listEnvironments(after);
    all.push(...page.nodes);
    after = page.nextCursor;
  } while (after);
  return all;
}

export async function getEnvironmentWithFlags(
  environmentId: string,
  after: string | null,
): Promise<{ environment: Environment; flags: FlagPage }> {
  const data = await consoleRequest<{ featureFlagEnvironment: Environment; featureFlags: FlagPage }>(
    `query EnvironmentFlags($id: ID!, $first: Int, $after: String) {
      featureFlagEnvironment(id: $id) { ${ENVIRONMENT_FIELDS} }
      featureFlags(environmentId: $id, first: $first, after: $after) { nodes { ${FLAG_FIELDS} } nextCursor }
    }`,
    { id: environmentId, first: FLAGS_PAGE_SIZE, ...(after ? { after } : {}) },
  );
  return { environment: data.featureFlagEnvironment, flags: data.featureFlags };
}

export async function createEnvironment(name: string, idempotencyKey: string | null): Promise<Environment> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createFeatureFlagEnvironment: Environment }>(
    `mutation CreateEnvironment($name: String!${idem.declaration}) {
      createFeatureFlagEnvironment(name: $name${idem.argument}) { ${ENVIRONMENT_FIELDS} }
    }`,
    { name, ...idem.variables },
  );
  return data.createFeatureFlagEnvironment;
}

/** Creates the flag (no etag) or replaces it (its etag); a blank value is null. */
export async function putFlag(environmentId: string, input: FlagInput, idempotencyKey: string | null): Promise<Flag> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ putFeatureFlag: Flag }>(
    `mutation PutFlag($env: ID!, $key: String!, $enabled: Boolean!, $description: String, $value: String,
        $etag: String${idem.declaration}) {
      putFeatureFlag(environmentId: $env, key: $key, enabled: $enabled, description: $description, value: $value,
        etag: $etag${idem.argument}) { ${FLAG_FIELDS} }
    }`,
    {
      env: environmentId,
      key: input.key,
      enabled: input.enabled,
      description: input.description,
      ...(input.value.trim() === '' ? {} : { value: input.value }),
      ...(input.etag ? { etag: input.etag } : {}),
      ...idem.variables,
    },
  );
  return data.putFeatureFlag;
}

export async function deleteFlag(environmentId: string, key: string, etag: string): Promise<void> {
  await consoleRequest<{ deleteFeatureFlag: boolean }>(
    `mutation DeleteFlag($env: ID!, $key: String!, $etag: String!) {
      deleteFeatureFlag(environmentId: $env, key: $key, etag: $etag)
    }`,
    { env: environmentId, key, etag },
  );
}
