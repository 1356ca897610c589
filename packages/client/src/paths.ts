import type { PathsWithMethod } from 'openapi-typescript-helpers';
import type { components, paths } from './generated/openapi.js';

/**
 * The generated operations, with one change the client makes to the contract's surface: `Idempotency-Key` is
 * optional, because the client sends a fresh one when the caller gives none (and the same one on its own retries).
 */
export type Paths = { [P in keyof paths]: { [M in keyof paths[P]]: WithOptionalIdempotencyKey<paths[P][M]> } };

type WithOptionalIdempotencyKey<Operation> = Operation extends { parameters: { header: infer Header } }
  ? 'Idempotency-Key' extends keyof Header
    ? Omit<Operation, 'parameters'> & {
        parameters: Omit<Operation['parameters'], 'header'> & HeaderOption<Omit<Header, 'Idempotency-Key'>>;
      }
    : Operation
  : Operation;

/** The header parameters stay required only while one of them is (If-Match on rotate_secret and resume). */
type HeaderOption<Rest> = object extends Rest
  ? { header?: Rest & { 'Idempotency-Key'?: string } }
  : { header: Rest & { 'Idempotency-Key'?: string } };

/** A schema of the API by its component name: `Schema<'Tenant'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

type ListBody = { data: unknown[]; next_cursor: string | null };
type JsonOk<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } }
  ? Body
  : never;

/** The GET paths that answer a cursor page (`{data, next_cursor}`). */
export type ListPath = {
  [P in PathsWithMethod<Paths, 'get'>]: JsonOk<Paths[P]['get']> extends ListBody ? P : never;
}[PathsWithMethod<Paths, 'get'>];

/** One item of a list path's pages. */
export type ListItem<P extends ListPath> = JsonOk<Paths[P]['get']> extends { data: (infer Item)[] } ? Item : never;
