import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

// A confirmation as a modal <dialog>: focus is kept inside, Escape cancels, and the safe answer
// has the focus first.

export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  onAnswer: (yes: boolean) => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = dialog.current;
    if (!el) return;
    if (props.open && !el.open) el.showModal();
    if (!props.open && el.open) el.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={() => props.onAnswer(false)}>
      <h2 id="confirm-title">{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" autofocus onClick={() => props.onAnswer(false)}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={() => props.onAnswer(true)}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
