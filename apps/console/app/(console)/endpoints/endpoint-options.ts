import 'server-only';
import { listEndpoints } from './endpoint.api';
import type { EndpointChoice, EndpointChoices } from '@/components/endpoint-select';
import type { EndpointPage } from './endpoint.types';

const CAP = 1000;
const PAGE = 200;

/** The endpoints of one tenant, or of the whole team, oldest first, at most 1000 of them (deleted ones are gone). */
export async function listEndpointOptions(tenantId: string | null = null): Promise<EndpointChoices> {
  const options: EndpointChoice[] = [];
  let after: string | null = null;
  do {
    const page: EndpointPage = await listEndpoints({ tenantId, after, first: PAGE });
    for (const endpoint of page.nodes)
      options.push({ id: endpoint.id, name: endpoint.name, tenantId: endpoint.tenantId });
    after = page.nextCursor;
  } while (after !== null && options.length < CAP);
  return { options, complete: after === null };
}

/** Names by endpoint ID, for lists that show which endpoint a delivery went to. */
export function endpointNames(choices: EndpointChoices | null): Map<string, string> {
  return new Map(choices?.options.map((endpoint) => [endpoint.id, endpoint.name]) ?? []);
}
