'use client';

import { Button, Code, CopyButton, Group } from '@mantine/core';

interface ShownOnceValueProps {
  value: string;
  /** The copy button's text: "Copy secret", "Copy URL". */
  copyLabel: string;
  testId: string;
}

/** A value the API shows once (a secret, a receive URL), in full with a button that copies it. */
export function ShownOnceValue({ value, copyLabel, testId }: ShownOnceValueProps) {
  return (
    <Group wrap="nowrap" align="center">
      <Code block flex={1} data-testid={testId} style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Button variant={copied ? 'filled' : 'light'} color={copied ? 'teal' : undefined} onClick={copy}>
            {copied ? 'Copied' : copyLabel}
          </Button>
        )}
      </CopyButton>
    </Group>
  );
}
