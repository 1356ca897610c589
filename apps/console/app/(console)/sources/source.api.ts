import 'server-only';
import { graphql } from '@/gql';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyVariable } from '@/lib/idempotency.server';
import {
  RECENT_CAPTURES,
  RECENT_REJECTIONS,
  SOURCES_PAGE_SIZE,
  type CreateSourceInput,
  type Source,
  type SourceChanges,
  type SourceDetail,
  type SourcePage,
  type SourceReveal,
  type VerifierKind,
} from './source.types';

graphql(`
  fragment SourceFields on Source {
    id
    tenantId
    name
    kind
    verification
    eventType
    eventTypePath
    eventTypePrefix
    billingKeyId
    status
    secretRotationEndsAt
    tokenRotationEndsAt
    secretVersion
    tokenVersion
    metadata
    version
    etag
    createdAt
    updatedAt
  }
`);

const SourcesQuery = graphql(`
  query Sources($first: Int, $after: String, $tenantId: ID) {
    sources(first: $first, after: $after, tenantId: $tenantId) {
      nodes {
        ...SourceFields
      }
      nextCursor
    }
  }
`);

const SourceQuery = graphql(`
  query Source($id: ID!, $captures: Int, $rejections: Int) {
    source(id: $id) {
      ...SourceFields
      recentMessages(first: $captures) {
        ...MessageFields
      }
      recentRejections(first: $rejections) {
        ...OperationalEventFields
      }
    }
  }
`);

const VerifierKindsQuery = graphql(`
  query VerifierKinds {
    verifierKinds {
      kind
      generatesSecret
      settings
    }
  }
`);

const CreateSourceMutation = graphql(`
  mutation CreateSource($input: CreateSourceInput!, $idempotencyKey: String) {
    createSource(input: $input, idempotencyKey: $idempotencyKey) {
      source {
        ...SourceFields
      }
      receiveUrl
      secret
    }
  }
`);

const UpdateSourceMutation = graphql(`
  mutation UpdateSource($id: ID!, $etag: String!, $input: UpdateSourceInput!) {
    updateSource(id: $id, etag: $etag, input: $input) {
      ...SourceFields
    }
  }
`);

const DeleteSourceMutation = graphql(`
  mutation DeleteSource($id: ID!, $etag: String!) {
    deleteSource(id: $id, etag: $etag)
  }
`);

const RotateSourceSecretMutation = graphql(`
  mutation RotateSourceSecret(
    $id: ID!
    $etag: String!
    $secret: String
    $overlapSeconds: Int
    $idempotencyKey: String
  ) {
    rotateSourceSecret(
      id: $id
      etag: $etag
      secret: $secret
      overlapSeconds: $overlapSeconds
      idempotencyKey: $idempotencyKey
    ) {
      source {
        ...SourceFields
      }
      receiveUrl
      secret
    }
  }
`);

const RotateSourceTokenMutation = graphql(`
  mutation RotateSourceToken($id: ID!, $etag: String!, $overlapSeconds: Int, $idempotencyKey: String) {
    rotateSourceToken(id: $id, etag: $etag, overlapSeconds: $overlapSeconds, idempotencyKey: $idempotencyKey) {
      source {
        ...SourceFields
      }
      receiveUrl
      secret
    }
  }
`);

/** Sources of one tenant, or of every tenant when `tenantId` is null. */
export async function listSources(args: { tenantId: string | null; after: string | null }): Promise<SourcePage> {
  const data = await consoleRequest(
    SourcesQuery,
    // Absent filters are left out: the API treats an explicit null as a value to check.
    {
      first: SOURCES_PAGE_SIZE,
      ...(args.tenantId ? { tenantId: args.tenantId } : {}),
      ...(args.after ? { after: args.after } : {}),
    },
  );
  return data.sources;
}

/** The source with its newest captures and its newest rejections of the last 30 days, newest first. */
export async function getSourceDetail(id: string): Promise<SourceDetail> {
  const data = await consoleRequest(SourceQuery, { id, captures: RECENT_CAPTURES, rejections: RECENT_REJECTIONS });
  return data.source;
}

export async function listVerifierKinds(): Promise<VerifierKind[]> {
  const data = await consoleRequest(VerifierKindsQuery);
  return data.verifierKinds;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second source. */
export async function createSource(input: CreateSourceInput, idempotencyKey: string | null): Promise<SourceReveal> {
  const data = await consoleRequest(CreateSourceMutation, { input, ...idempotencyVariable(idempotencyKey) });
  return data.createSource;
}

/** Members left undefined are not sent, so the API keeps their values; null clears. */
export async function updateSource(
  id: string,
  etag: string,
  input: Partial<SourceChanges> & { status?: 'active' | 'paused' },
): Promise<Source> {
  const data = await consoleRequest(UpdateSourceMutation, { id, etag, input });
  return data.updateSource;
}

export async function deleteSource(id: string, etag: string): Promise<void> {
  await consoleRequest(DeleteSourceMutation, { id, etag });
}

/** `secret`: the provider's new secret, or null for kinds that generate theirs (shown once in the answer). */
export async function rotateSourceSecret(
  id: string,
  etag: string,
  args: { secret: string | null; overlapSeconds: number },
  idempotencyKey: string | null,
): Promise<SourceReveal> {
  const data = await consoleRequest(RotateSourceSecretMutation, {
    id,
    etag,
    overlapSeconds: args.overlapSeconds,
    ...(args.secret === null ? {} : { secret: args.secret }),
    ...idempotencyVariable(idempotencyKey),
  });
  return data.rotateSourceSecret;
}

export async function rotateSourceToken(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string | null,
): Promise<SourceReveal> {
  const data = await consoleRequest(RotateSourceTokenMutation, {
    id,
    etag,
    overlapSeconds,
    ...idempotencyVariable(idempotencyKey),
  });
  return data.rotateSourceToken;
}
