import 'server-only';
import { consoleRequest } from '@/lib/console-api.server';
import { idempotencyParts } from '@/lib/idempotency.server';
import { EVENT_FIELDS } from '../events/event.api';
import { MESSAGE_FIELDS } from '../messages/message.api';
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

const SOURCE_FIELDS = `id tenantId name kind verification eventType eventTypePath eventTypePrefix billingKeyId status
  secretRotationEndsAt tokenRotationEndsAt secretVersion tokenVersion metadata version etag createdAt updatedAt`;

/** Sources of one tenant, or of every tenant when `tenantId` is null. */
export async function listSources(args: { tenantId: string | null; after: string | null }): Promise<SourcePage> {
  const data = await consoleRequest<{ sources: SourcePage }>(
    `query Sources($first: Int, $after: String, $tenantId: ID) {
      sources(first: $first, after: $after, tenantId: $tenantId) { nodes { ${SOURCE_FIELDS} } nextCursor }
    }`,
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
  const data = await consoleRequest<{ source: SourceDetail }>(
    `query Source($id: ID!, $captures: Int, $rejections: Int) {
      source(id: $id) {
        ${SOURCE_FIELDS}
        recentMessages(first: $captures) { ${MESSAGE_FIELDS} }
        recentRejections(first: $rejections) { ${EVENT_FIELDS} }
      }
    }`,
    { id, captures: RECENT_CAPTURES, rejections: RECENT_REJECTIONS },
  );
  return data.source;
}

export async function listVerifierKinds(): Promise<VerifierKind[]> {
  const data = await consoleRequest<{ verifierKinds: VerifierKind[] }>(
    `query VerifierKinds { verifierKinds { kind generatesSecret settings } }`,
  );
  return data.verifierKinds;
}

/** `idempotencyKey`: one per form opening, so a resubmit after a lost answer cannot make a second source. */
export async function createSource(input: CreateSourceInput, idempotencyKey: string | null): Promise<SourceReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ createSource: SourceReveal }>(
    `mutation CreateSource($input: CreateSourceInput!${idem.declaration}) {
      createSource(input: $input${idem.argument}) { source { ${SOURCE_FIELDS} } receiveUrl secret }
    }`,
    { input, ...idem.variables },
  );
  return data.createSource;
}

/** Members left undefined are not sent, so the API keeps their values; null clears. */
export async function updateSource(
  id: string,
  etag: string,
  input: Partial<SourceChanges> & { status?: 'active' | 'paused' },
): Promise<Source> {
  const data = await consoleRequest<{ updateSource: Source }>(
    `mutation UpdateSource($id: ID!, $etag: String!, $input: UpdateSourceInput!) {
      updateSource(id: $id, etag: $etag, input: $input) { ${SOURCE_FIELDS} }
    }`,
    { id, etag, input },
  );
  return data.updateSource;
}

export async function deleteSource(id: string, etag: string): Promise<void> {
  await consoleRequest<{ deleteSource: boolean }>(
    `mutation DeleteSource($id: ID!, $etag: String!) { deleteSource(id: $id, etag: $etag) }`,
    { id, etag },
  );
}

/** `secret`: the provider's new secret, or null for kinds that generate theirs (shown once in the answer). */
export async function rotateSourceSecret(
  id: string,
  etag: string,
  args: { secret: string | null; overlapSeconds: number },
  idempotencyKey: string | null,
): Promise<SourceReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ rotateSourceSecret: SourceReveal }>(
    `mutation RotateSourceSecret($id: ID!, $etag: String!, $secret: String, $overlapSeconds: Int${idem.declaration}) {
      rotateSourceSecret(id: $id, etag: $etag, secret: $secret, overlapSeconds: $overlapSeconds${idem.argument}) {
        source { ${SOURCE_FIELDS} } receiveUrl secret
      }
    }`,
    {
      id,
      etag,
      overlapSeconds: args.overlapSeconds,
      ...(args.secret === null ? {} : { secret: args.secret }),
      ...idem.variables,
    },
  );
  return data.rotateSourceSecret;
}

export async function rotateSourceToken(
  id: string,
  etag: string,
  overlapSeconds: number,
  idempotencyKey: string | null,
): Promise<SourceReveal> {
  const idem = idempotencyParts(idempotencyKey);
  const data = await consoleRequest<{ rotateSourceToken: SourceReveal }>(
    `mutation RotateSourceToken($id: ID!, $etag: String!, $overlapSeconds: Int${idem.declaration}) {
      rotateSourceToken(id: $id, etag: $etag, overlapSeconds: $overlapSeconds${idem.argument}) {
        source { ${SOURCE_FIELDS} } receiveUrl secret
      }
    }`,
    { id, etag, overlapSeconds, ...idem.variables },
  );
  return data.rotateSourceToken;
}
