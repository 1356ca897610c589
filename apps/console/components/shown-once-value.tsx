'use client';

import { useState } from 'react';
import { Button, Code, Group } from '@mantine/core';

interface ShownOnceValueProps {
  value: string;
  /** The copy button's text: "Copy secret", "Copy URL". */
  copyLabel: string;
  testId: string;
}

/**
 * A value the API shows once (a secret, a receive URL), in full with a button that copies it. Once copied, the button
 * says so for as long as the value is shown: Mantine's CopyButton went back to "Copy" after a second, which left the
 * operator unsure whether the only copy they will get was taken (and a test on a loaded machine looked after it had
 * gone). Where the browser has no clipboard (a page over plain http under a name that is not loopback), the button
 * does nothing and the value stays there to select.
 */
export function ShownOnceValue({ value, copyLabel, testId }: ShownOnceValueProps) {
  const [copiedValue, setCopiedValue] = useState<string | null>(null);
  const copied = copiedValue === value;
  const copy = () => {
    if (!('clipboard' in navigator)) return;
    navigator.clipboard.writeText(value).then(
      () => setCopiedValue(value),
      () => setCopiedValue(null),
    );
  };
  return (
    <Group wrap="nowrap" align="center">
      <Code block flex={1} data-testid={testId} style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
        {value}
      </Code>
      <Button variant={copied ? 'filled' : 'light'} color={copied ? 'teal' : undefined} onClick={copy}>
        {copied ? 'Copied' : copyLabel}
      </Button>
    </Group>
  );
}
