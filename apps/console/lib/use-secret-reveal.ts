'use client';

import { useState } from 'react';

/**
 * A signing secret on its way to the operator's eyes: held in memory while its modal is open and dropped once
 * the modal has finished closing. It is never put in the URL, a cookie or storage.
 */
export function useSecretReveal() {
  const [secret, setSecret] = useState<string | null>(null);
  const [opened, setOpened] = useState(false);
  return {
    secret,
    opened,
    reveal: (value: string) => {
      setSecret(value);
      setOpened(true);
    },
    close: () => setOpened(false),
    forget: () => setSecret(null),
  };
}

export type SecretReveal = ReturnType<typeof useSecretReveal>;
