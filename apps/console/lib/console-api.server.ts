import 'server-only';
import { redirect } from 'next/navigation';
import type { ActionResult } from './api-error';
import type { TypedDocumentString } from '@/gql/graphql';
import { ApiFailure, sendGraphql, type VariablesArgument } from './graphql.server';
import { requireSessionToken } from './session.server';

/** Where an ended session (signed out elsewhere, expired, key revoked) sends the visitor; the sign-in page explains. */
const EXPIRED_SESSION = '/sign-in?expired=1';

/** One GraphQL operation with the console session. A session the API no longer accepts goes to sign-in. */
export async function consoleRequest<TData, TVariables>(
  document: TypedDocumentString<TData, TVariables>,
  ...variables: VariablesArgument<NoInfer<TVariables>>
): Promise<TData> {
  const token = await requireSessionToken();
  try {
    return await sendGraphql(token, document, ...variables);
  } catch (error) {
    if (error instanceof ApiFailure && error.error.code === 'unauthorized') redirect(EXPIRED_SESSION);
    throw error;
  }
}

/** Runs a server action's API work; API errors become a result the form can show next to its fields. */
export async function toActionResult<T>(work: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, data: await work() };
  } catch (error) {
    if (error instanceof ApiFailure) return { ok: false, error: error.error };
    throw error;
  }
}
