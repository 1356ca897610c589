'use client';

import { Alert, Anchor, Text } from '@mantine/core';
import Link from 'next/link';
import type { ApiError } from '@/lib/api-error';
import { knownProblem } from '@/lib/api-problem';

/** Shown instead of a list when the API refused to load it; production builds hide thrown messages. */
export function LoadError({
  error,
  resetHref,
  title = 'Could not load this list',
}: {
  error: ApiError;
  resetHref: string;
  title?: string;
}) {
  const problem = knownProblem(error);
  return (
    <Alert color="red" title={problem ? `${title}: ${problem.title.toLowerCase()}` : title} maw={720}>
      <Text size="sm">{problem?.explanation ?? error.message}</Text>
      <Anchor component={Link} href={resetHref} size="sm">
        Start over
      </Anchor>
    </Alert>
  );
}
