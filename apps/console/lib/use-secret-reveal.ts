'use client';

import { useState } from 'react';

/**
 * Something shown once (a signing secret, a receive URL) on its way to the operator's eyes: held in memory while
 * its modal is open and dropped once the modal has finished closing. It is never put in the URL, a cookie or
 * storage.
 */
export function useSecretReveal<T = string>() {
  const [secret, setSecret] = useState<T | null>(null);
  const [opened, setOpened] = useState(false);
  return {
    secret,
    opened,
    reveal: (value: T) => {
      setSecret(value);
      setOpened(true);
    },
    close: () => setOpened(false),
    forget: () => setSecret(null),
  };
}

export type SecretReveal<T = string> = ReturnType<typeof useSecretReveal<T>>;
