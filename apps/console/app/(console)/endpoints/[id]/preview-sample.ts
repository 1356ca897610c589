import 'server-only';
import { toActionResult } from '@/lib/console-api.server';
import { listEventTypes } from '../../event-types/event-type.api';

export interface PreviewSample {
  /** JSON text for the preview editor. */
  payload: string;
  /** The event type whose example it is, or null for the `{}` fallback. */
  exampleOf: string | null;
}

const EMPTY: PreviewSample = { payload: '{}', exampleOf: null };

/**
 * The example of the first event type the endpoint names exactly (not `*` or `prefix.*`), or `{}`. A failed
 * lookup only costs the convenience, so it falls back too.
 */
export async function previewSample(events: readonly string[]): Promise<PreviewSample> {
  const name = events.find((pattern) => !pattern.endsWith('*'));
  if (name === undefined) return EMPTY;
  const page = await toActionResult(() => listEventTypes({ after: null, name }));
  const example = page.ok ? page.data.nodes.find((type) => type.name === name)?.example : null;
  return example ? { payload: example, exampleOf: name } : EMPTY;
}
