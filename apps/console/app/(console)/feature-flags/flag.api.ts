import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  ENVIRONMENTS_PAGE_SIZE,
  FLAGS_PAGE_SIZE,
  type Environment,
  type EnvironmentPage,
  type Flag,
  type FlagInput,
  type FlagPage,
} from './flag.types';

graphql(`
  fragment FeatureFlagEnvironmentFields on FeatureFlagEnvironment {
    id
    name
    revision
    etag
    createdAt
    updatedAt
  }
`);

graphql(`
  fragment FeatureFlagFields on FeatureFlag {
    environmentId
    key
    enabled
    description
    value
    version
    revision
    etag
    updatedBy
    updatedAt
  }
`);

const EnvironmentsQuery = graphql(`
  query Environments($first: Int, $after: String) {
    featureFlagEnvironments(first: $first, after: $after) {
      nodes {
        ...FeatureFlagEnvironmentFields
      }
      nextCursor
    }
  }
`);

const EnvironmentFlagsQuery = graphql(`
  query EnvironmentFlags($id: ID!, $first: Int, $after: String) {
    featureFlagEnvironment(id: $id) {
      ...FeatureFlagEnvironmentFields
    }
    featureFlags(environmentId: $id, first: $first, after: $after) {
      nodes {
        ...FeatureFlagFields
      }
      nextCursor
    }
  }
`);

const CreateEnvironmentMutation = graphql(`
  mutation CreateEnvironment($name: String!, $idempotencyKey: String) {
    createFeatureFlagEnvironment(name: $name, idempotencyKey: $idempotencyKey) {
      ...FeatureFlagEnvironmentFields
    }
  }
`);

const PutFlagMutation = graphql(`
  mutation PutFlag(
    $env: ID!
    $key: String!
    $enabled: Boolean!
    $description: String
    $value: String
    $etag: String
    $idempotencyKey: String
  ) {
    putFeatureFlag(
      environmentId: $env
      key: $key
      enabled: $enabled
      description: $description
      value: $value
      etag: $etag
      idempotencyKey: $idempotencyKey
    ) {
      ...FeatureFlagFields
    }
  }
`);

const DeleteFlagMutation = graphql(`
  mutation DeleteFlag($env: ID!, $key: String!, $etag: String!) {
    deleteFeatureFlag(environmentId: $env, key: $key, etag: $etag)
  }
`);

export async function listEnvironments(after: string | null): Promise<EnvironmentPage> {
  const data = await consoleRequest(EnvironmentsQuery, { first: ENVIRONMENTS_PAGE_SIZE, ...(after ? { after } : {}) });
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
  const data = await consoleRequest(EnvironmentFlagsQuery, {
    id: environmentId,
    first: FLAGS_PAGE_SIZE,
    ...(after ? { after } : {}),
  });
  return { environment: data.featureFlagEnvironment, flags: data.featureFlags };
}

export async function createEnvironment(name: string, idempotencyKey: string | null): Promise<Environment> {
  const data = await consoleRequest(CreateEnvironmentMutation, { name, ...idempotencyVariable(idempotencyKey) });
  return data.createFeatureFlagEnvironment;
}

/** Creates the flag (no etag) or replaces it (its etag); a blank value is null. */
export async function putFlag(environmentId: string, input: FlagInput, idempotencyKey: string | null): Promise<Flag> {
  const data = await consoleRequest(PutFlagMutation, {
    env: environmentId,
    key: input.key,
    enabled: input.enabled,
    description: input.description,
    ...(input.value.trim() === '' ? {} : { value: input.value }),
    ...(input.etag ? { etag: input.etag } : {}),
    ...idempotencyVariable(idempotencyKey),
  });
  return data.putFeatureFlag;
}

export async function deleteFlag(environmentId: string, key: string, etag: string): Promise<void> {
  await consoleRequest(DeleteFlagMutation, { env: environmentId, key, etag });
}
