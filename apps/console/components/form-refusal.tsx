'use client';

import { Alert } from '@mantine/core';
import { isFormLevel, type ApiError } from '@/lib/api-error';

interface FormRefusalProps {
  error: ApiError | null;
  /** "Not rotated", "Not canceled". */
  title: string;
  /** Fields the form shows their own refusals at; a refusal of one of them is not repeated here. */
  fields?: readonly string[];
  /** What to say instead of the API's message. */
  message?: string | undefined;
}

/** The API's refusal of the whole form, above its buttons. */
export function FormRefusal({ error, title, fields, message }: FormRefusalProps) {
  if (!error || (fields && !isFormLevel(error, fields))) return null;
  return (
    <Alert color="red" title={title}>
      {message ?? error.message}
    </Alert>
  );
}
