/** Picks a job's field_names from the http_requests dataset's fields, in the order they are chosen. */
import { useState } from 'preact/hooks';

export function FieldPicker({ fields, selected, onChange }: {
  /** Field name -> description, from GET .../datasets/http_requests/fields. */
  fields: Record<string, string>;
  selected: string[];
  onChange: (selected: string[]) => void;
}) {
  const [search, setSearch] = useState('');
  const needle = search.trim().toLowerCase();
  const shown = Object.keys(fields).sort().filter((name) => needle === '' || name.toLowerCase().includes(needle) || fields[name]!.toLowerCase().includes(needle));
  const toggle = (name: string, on: boolean) => onChange(on ? [...selected, name] : selected.filter((n) => n !== name));
  return (
    <div class="field-picker">
      <div class="field-picker-chosen">
        <p id="chosen-fields-label" class="label">Fields in each line, in order ({selected.length})</p>
        {selected.length === 0 ? <p class="field-problem">Pick at least one field.</p> : (
          <ol class="chips" aria-labelledby="chosen-fields-label">
            {selected.map((name) => (
              <li key={name} class="chip">
                <span>{name}</span>
                <button type="button" class="chip-remove" aria-label={`Remove field ${name}`} onClick={() => toggle(name, false)}>×</button>
              </li>
            ))}
          </ol>
        )}
      </div>
      <div class="field">
        <label for="field-search">Find a field</label>
        <input id="field-search" type="search" value={search} placeholder="e.g. Client, Status, Cookies" onInput={(e) => setSearch(e.currentTarget.value)} />
      </div>
      <fieldset class="field-options">
        <legend class="visually-hidden">Fields of the http_requests dataset</legend>
        {shown.length === 0 && <p class="muted">No field matches “{search}”.</p>}
        {shown.map((name) => (
          <label key={name} class="field-option">
            <input type="checkbox" checked={selected.includes(name)} onChange={(e) => toggle(name, e.currentTarget.checked)} />
            <span class="field-option-name">{name}</span>
            <span class="field-option-description">{fields[name]}</span>
          </label>
        ))}
      </fieldset>
    </div>
  );
}
