import type { ComponentChildren } from 'preact';

// A labelled form control with what describes it under it: a hint, a note (the setting is the
// config file's), and the error that refused it. The control takes fieldAria()'s attributes, so
// a screen reader reads all three with it.

export interface FieldText {
  hint?: string | undefined;
  note?: string | undefined;
  error?: string | undefined;
}

/** The control's id and what describes it (`id` names the control; the texts' ids derive from it). */
export function fieldAria(id: string, text: FieldText) {
  const ids = [text.hint ? `${id}-hint` : '', text.note ? `${id}-note` : '', text.error ? `${id}-error` : ''];
  const describedBy = ids.filter(Boolean).join(' ');
  return { id, 'aria-describedby': describedBy || undefined, 'aria-invalid': text.error ? true : undefined };
}

export function Field(props: FieldText & { id: string; label: string; children: ComponentChildren }) {
  const { id } = props;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children}
      {props.hint ? (
        <p class="meta" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.note ? (
        <p class="file-note" id={`${id}-note`}>
          {props.note}
        </p>
      ) : null}
      {props.error ? (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}
