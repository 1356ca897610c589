'use client';

import { useState } from 'react';

/**
 * The value, or the last non-null one it had. A modal keeps showing what it was opened for while its closing
 * transition runs, instead of emptying out.
 */
export function useLastPresent<T>(value: T | null): T | null {
  const [last, setLast] = useState<T | null>(value);
  if (value !== null && value !== last) setLast(value);
  return value ?? last;
}
