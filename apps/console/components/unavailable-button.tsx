'use client';

import type { ReactNode } from 'react';
import { Button, Tooltip, type MantineColor } from '@mantine/core';

interface UnavailableButtonProps {
  /** Why the action cannot be taken now, shown on hover. */
  reason: ReactNode;
  color?: MantineColor;
  children: ReactNode;
}

/**
 * A button that looks disabled yet still shows why on hover (a disabled button gets no pointer events, so its
 * tooltip would never open); a click does nothing.
 */
export function UnavailableButton({ reason, color, children }: UnavailableButtonProps) {
  return (
    <Tooltip label={reason}>
      <Button variant="light" color={color} data-disabled onClick={(event) => event.preventDefault()}>
        {children}
      </Button>
    </Tooltip>
  );
}
