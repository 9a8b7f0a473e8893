// A labelled <select> of the filters: "all" first (value ''), then the choices by name.

export function Choice<T extends string>(props: {
  label: string;
  value: T | '';
  all: string | null;
  choices: ReadonlyArray<{ value: T; name: string }>;
  onChange: (value: T | '') => void;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value as T | '')}>
        {props.all !== null ? <option value="">{props.all}</option> : null}
        {props.choices.map((c) => (
          <option key={c.value} value={c.value}>
            {c.name}
          </option>
        ))}
      </select>
    </label>
  );
}
