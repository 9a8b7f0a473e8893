import { useEffect } from 'preact/hooks';
import type { SignedOutReason } from '../auth.js';

// Before the app: straight to the sign-in page on a first visit; after a sign-out, an expired
// session or a refusal, a sentence saying which and a button.

const HEADINGS: Record<SignedOutReason, string> = {
  new: 'Signing in…',
  expired: 'Your session expired',
  'signed-out': 'You are signed out',
  refused: 'Sign-in did not work',
};

export function SignInScreen(props: {
  reason?: SignedOutReason;
  message: string | null;
  onSignIn: (() => void) | null;
}) {
  const { onSignIn } = props;
  const reason = props.reason ?? 'refused';
  const auto = reason === 'new' && props.message === null && onSignIn !== null;
  useEffect(() => {
    if (auto) onSignIn?.();
  }, [auto, onSignIn]);
  return (
    <main class="signin" id="main">
      <p class="brand-line">Edge gateway</p>
      <h1>{props.onSignIn === null ? 'The gateway cannot be reached' : HEADINGS[reason]}</h1>
      {reason === 'expired' ? (
        <p>The gateway no longer accepts this sign-in. Sign in again to go on where you were.</p>
      ) : null}
      {props.message !== null ? <p class="detail">{props.message}</p> : null}
      {props.onSignIn !== null && !auto ? (
        <button type="button" class="primary" onClick={props.onSignIn}>
          Sign in
        </button>
      ) : null}
    </main>
  );
}
