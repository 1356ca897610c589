'use client';

import { useActionState, useEffect } from 'react';
import { Button, PasswordInput, Stack } from '@mantine/core';
import { signIn, type SignInState } from './actions';

const initialState: SignInState = { error: null };

export function SignInForm() {
  const [state, formAction, pending] = useActionState(signIn, initialState);
  // A page load of its own, not a client-side navigation: the proxy then sees only the cookies the browser kept.
  useEffect(() => {
    if (state.signedIn) window.location.assign('/dashboard');
  }, [state.signedIn]);
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
        <Button type="submit" loading={pending || state.signedIn === true}>
          Sign in
        </Button>
      </Stack>
    </form>
  );
}
