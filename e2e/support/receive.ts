import type { StackInfo } from './stack';

export interface ReceiveAnswer {
  status: number;
  body: string;
}

/**
 * POSTs to a source's receive URL as a provider would. The URL is built from the server's public base URL
 * (http://localhost:<port> in local mode); the request goes to the same path on the stack's API address, so the
 * test does not depend on how the machine resolves localhost.
 */
export async function postToReceiveUrl(
  stack: StackInfo,
  receiveUrl: string,
  body: string,
  headers: Record<string, string>,
): Promise<ReceiveAnswer> {
  const response = await fetch(`${stack.apiUrl}${new URL(receiveUrl).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, body: await response.text() };
}
