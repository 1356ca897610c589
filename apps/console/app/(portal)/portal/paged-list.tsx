import type { ReactNode } from 'react';
import { LoadError } from '@/components/load-error';
import { Pager } from '@/components/pager';
import type { ActionResult } from '@/lib/api-error';
import { listHref } from '@/lib/list-href';
import type { PortalPage } from './portal.types';

interface PagedListProps<T> {
  /** One page of a portal list, or why it could not be read (a cursor the API refused). */
  page: ActionResult<PortalPage<T>>;
  /** The page's own address, without `?after=`. */
  path: string;
  /** The list's search, kept on every page's address. */
  params?: Record<string, string>;
  /** The cursor this page was read from; null on the first page. */
  after: string | null;
  /** The rows, as a table or cards. */
  children: (nodes: T[]) => ReactNode;
}

/** A page of a portal list with Next page and First page under it, or the refusal with a way back to the start. */
export function PagedList<T>({ page, path, params = {}, after, children }: PagedListProps<T>) {
  if (!page.ok) return <LoadError error={page.error} resetHref={path} />;
  return (
    <div>
      {children(page.data.nodes)}
      <Pager
        shown={page.data.nodes.length}
        firstHref={after ? listHref(path, params) : null}
        nextHref={page.data.nextCursor ? listHref(path, { ...params, after: page.data.nextCursor }) : null}
      />
    </div>
  );
}
