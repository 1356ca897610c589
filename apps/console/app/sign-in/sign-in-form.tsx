'use client';

import { useActionState } from 'react';
import { Button, PasswordInput, Stack } from '@mantine/core';
import { signIn, type SignInState } from './actions';

const initialState: SignInState = { error: null };

export function SignInForm() {
  const [state, formAction, pending] = useActionState(signIn, initialState);
  return (
    <form action={formAction}>
      <Stack>
        <PasswordInput
          name="key"
          label="Secret key"
          placeholder="svc_sk_..."
          autoComplete="off"
          spellCheck={false}
          required
          error={state.error}
          aria-invalid={state.error !== null}
          data-autofocus
        />
        <Button type="submit" loading={pending}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}
