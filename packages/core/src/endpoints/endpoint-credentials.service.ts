import type { EntityManager } from 'typeorm';
import type { Clock } from '../common/clock.js';
import type { Sealer } from '../common/sealing.js';
import { EndpointSecrets } from './endpoint-secrets.js';
import type { EndpointEntity } from './endpoint.entity.js';

/** The outbound credentials of an endpoint, opened for the delivery engine. Never rendered. */
export interface EndpointCredentials {
  headers: Record<string, string>;
  authorization: string | null;
  signingSecrets: string[];
}

/** Associated data binds a sealed value to its endpoint and purpose, so a value copied to another row won't open. */
const headersContext = (id: string) => `endpoint:${id}:headers`;
const authorizationContext = (id: string) => `endpoint:${id}:authorization`;

/**
 * An endpoint's write-only values: custom header values and the authorization value sealed at rest, and its
 * signing secrets. The endpoint service seals through it; the delivery engine opens through it.
 */
export class EndpointCredentialsService {
  readonly secrets: EndpointSecrets;

  constructor(
    private readonly sealer: Sealer,
    private readonly clock: Clock,
  ) {
    this.secrets = new EndpointSecrets(sealer);
  }

  /** The columns that hold an endpoint's custom headers: the names in the clear, the values sealed. */
  sealHeaders(id: string, headers: Record<string, string>): Pick<EndpointEntity, 'headerNames' | 'headersSealed'> {
    const names = Object.keys(headers).map((name) => name.toLowerCase());
    return {
      headerNames: names,
      headersSealed: names.length === 0 ? null : this.sealer.seal(JSON.stringify(headers), headersContext(id)),
    };
  }

  sealAuthorization(id: string, authorization: string | null): Buffer | null {
    return authorization === null ? null : this.sealer.seal(authorization, authorizationContext(id));
  }

  openHeaders(endpoint: Pick<EndpointEntity, 'id' | 'headersSealed'>): Record<string, string> {
    return endpoint.headersSealed
      ? (JSON.parse(this.sealer.open(endpoint.headersSealed, headersContext(endpoint.id))) as Record<string, string>)
      : {};
  }

  openAuthorization(endpoint: Pick<EndpointEntity, 'id' | 'authorizationSealed'>): string | null {
    return endpoint.authorizationSealed
      ? this.sealer.open(endpoint.authorizationSealed, authorizationContext(endpoint.id))
      : null;
  }

  sameHeaders(endpoint: EndpointEntity, headers: Record<string, string>): boolean {
    return JSON.stringify(this.openHeaders(endpoint)) === JSON.stringify(headers);
  }

  sameAuthorization(endpoint: EndpointEntity, authorization: string | null): boolean {
    return this.openAuthorization(endpoint) === authorization;
  }

  /** For the delivery engine: the values to send, opened from their sealed form. */
  async forDelivery(tx: EntityManager, endpoint: EndpointEntity): Promise<EndpointCredentials> {
    return {
      headers: this.openHeaders(endpoint),
      authorization: this.openAuthorization(endpoint),
      signingSecrets: await this.secrets.signingSecrets(tx, endpoint.id, this.clock.now()),
    };
  }
}
