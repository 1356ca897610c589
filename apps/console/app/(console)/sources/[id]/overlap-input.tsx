'use client';

import { NumberInput } from '@mantine/core';
import { fieldMessage, type ApiError } from '@/lib/api-error';
import { formatTimestamp } from '@/lib/format';
import { MAX_ROTATION_OVERLAP_SECONDS } from '../source.types';

/** The overlap as typed, checked: a whole number of seconds from 0 to the most the API allows. */
export function readOverlap(value: string | number): number | ApiError {
  const seconds = typeof value === 'number' ? value : Number(value);
  if (value === '' || !Number.isInteger(seconds) || seconds < 0 || seconds > MAX_ROTATION_OVERLAP_SECONDS)
    return {
      code: 'invalid_field',
      message: `Enter a whole number of seconds from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}.`,
      field: 'overlap_seconds',
    };
  return seconds;
}

/**
 * The overlap of a rotation's start: the most the API allows, or 0 while the previous rotation's overlap runs (the API
 * then accepts only 0, which retires the older one at once).
 */
export function initialOverlap(runningUntil: string | null): number {
  return runningUntil === null ? MAX_ROTATION_OVERLAP_SECONDS : 0;
}

interface OverlapInputProps {
  value: string | number;
  onChange: (value: string | number) => void;
  /** What keeps working during the overlap: "the current secret". */
  what: string;
  /** While an earlier rotation's overlap runs: when it ends. */
  runningUntil: string | null;
  error: ApiError | null;
}

export function OverlapInput({ value, onChange, what, runningUntil, error }: OverlapInputProps) {
  const running =
    runningUntil === null
      ? ''
      : ` An earlier rotation's overlap runs until ${formatTimestamp(runningUntil)}: only 0 is accepted until then, and it retires that one too.`;
  return (
    <NumberInput
      label="Overlap (seconds)"
      description={`How long ${what} keeps working: 0 to ${MAX_ROTATION_OVERLAP_SECONDS} (0 retires it now).${running}`}
      value={value}
      onChange={onChange}
      min={0}
      max={MAX_ROTATION_OVERLAP_SECONDS}
      clampBehavior="none"
      allowDecimal={false}
      allowNegative={false}
      error={fieldMessage(error, 'overlap_seconds')}
      data-autofocus
    />
  );
}
