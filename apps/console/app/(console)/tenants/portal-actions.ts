'use server';

import { graphql } from '@/gql';
import type { ActionResult } from '@/lib/api-error';
import { invalidArgument, isObject } from '@/lib/action-args.server';
import { consoleRequest, toActionResult } from '@/lib/console-api.server';
import { isIdempotencyKey } from '@/lib/idempotency.server';

export interface PortalSessionRequest {
  capabilities: 'read_only' | 'manage_endpoints';
  expiresInSeconds: number;
  spendingCapUsd: string;
  displayName: string;
  accentColor: string;
  logoUrl: string;
}

export interface CreatedPortalLink {
  url: string | null;
  expiresAt: string;
}

const CreatePortalSessionMutation = graphql(`
  mutation CreatePortalSession($tenantId: ID!, $input: CreatePortalSessionInput, $idempotencyKey: String) {
    createPortalSession(tenantId: $tenantId, input: $input, idempotencyKey: $idempotencyKey) {
      url
      session {
        id
        expiresAt
      }
    }
  }
`);

/** Creates a receivers' portal session for the tenant; the answer's one-time link is shown to the operator once. */
export async function createPortalSessionAction(
  tenantId: unknown,
  input: unknown,
  idempotencyKey: unknown,
): Promise<ActionResult<CreatedPortalLink>> {
  if (typeof tenantId !== 'string') return invalidArgument('tenant_id', 'not a tenant');
  if (!isIdempotencyKey(idempotencyKey)) return invalidArgument('idempotency_key', 'not a valid idempotency key');
  if (!isObject(input)) return invalidArgument('body', 'the session must be an object');
  const { capabilities, expiresInSeconds, spendingCapUsd, displayName, accentColor, logoUrl } = input;
  if (capabilities !== 'read_only' && capabilities !== 'manage_endpoints')
    return invalidArgument('capabilities', 'read_only or manage_endpoints');
  if (typeof expiresInSeconds !== 'number' || !Number.isInteger(expiresInSeconds))
    return invalidArgument('expires_in_seconds', 'must be whole seconds');
  for (const [field, value] of Object.entries({ spendingCapUsd, displayName, accentColor, logoUrl }))
    if (typeof value !== 'string') return invalidArgument(field, `${field} must be text`);
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);
  return toActionResult(async () => {
    const data = await consoleRequest(CreatePortalSessionMutation, {
      tenantId,
      input: {
        capabilities,
        expiresInSeconds,
        spendingCapUsd: text(spendingCapUsd) ?? '0',
        branding: { displayName: text(displayName), accentColor: text(accentColor), logoUrl: text(logoUrl) },
      },
      idempotencyKey,
    });
    return { url: data.createPortalSession.url, expiresAt: data.createPortalSession.session.expiresAt };
  });
}
