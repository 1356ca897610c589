'use client';

import { Input, SegmentedControl } from '@mantine/core';

interface SegmentedChoiceProps {
  label: string;
  /** Names the control for assistive technology when the label says less ("Show"). */
  ariaLabel?: string;
  value: string;
  data: { value: string; label: string }[];
  onChange: (value: string) => void;
}

/** A labelled row of choices applied at once (a time window, a status): the list's URL changes on a click. */
export function SegmentedChoice({ label, ariaLabel = label, value, data, onChange }: SegmentedChoiceProps) {
  return (
    <Input.Wrapper label={label}>
      <div>
        <SegmentedControl value={value} onChange={onChange} data={data} aria-label={ariaLabel} />
      </div>
    </Input.Wrapper>
  );
}
