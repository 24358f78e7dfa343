/**
 * Picks a job's field_names from the http_requests dataset's fields, in the order they are chosen.
 * Only the fields the edge fills are offered; the others (null in every line here) are hidden
 * behind a switch and marked "never filled here" when shown, and so is any the job already names.
 */
import { useState } from 'preact/hooks';
import type { CatalogField } from '../jobs.ts';

export function FieldPicker({
  fields,
  selected,
  onChange,
}: {
  /** The dataset's fields, from GET .../datasets/http_requests/catalog. */
  fields: CatalogField[];
  selected: string[];
  onChange: (selected: string[]) => void;
}) {
  const [search, setSearch] = useState('');
  const [showUnfilled, setShowUnfilled] = useState(false);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const unfilled = fields.filter((f) => !f.filled);
  const needle = search.trim().toLowerCase();
  const shown = [...fields]
    .sort((a, b) => a.name.localeCompare(b.name))
    .filter((f) => f.filled || showUnfilled)
    .filter((f) => needle === '' || f.name.toLowerCase().includes(needle) || f.description.toLowerCase().includes(needle));
  const toggle = (name: string, on: boolean) => onChange(on ? [...selected, name] : selected.filter((n) => n !== name));
  return (
    <div class="field-picker">
      <div class="field-picker-chosen">
        <p id="chosen-fields-label" class="label">
          Fields in each line, in order ({selected.length})
        </p>
        {selected.length === 0 ? (
          <p class="field-problem">Pick at least one field.</p>
        ) : (
          <ol class="chips" aria-labelledby="chosen-fields-label">
            {selected.map((name) => {
              const never = byName.get(name)?.filled === false;
              return (
                <li key={name} class={never ? 'chip chip-warn' : 'chip'}>
                  <span>
                    {name}
                    {never && <span class="chip-note"> (never filled here)</span>}
                  </span>
                  <button type="button" class="chip-remove" aria-label={`Remove field ${name}`} onClick={() => toggle(name, false)}>
                    ×
                  </button>
                </li>
              );
            })}
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
        {shown.map((field) => (
          <label key={field.name} class={field.filled ? 'field-option' : 'field-option field-option-unfilled'}>
            <input type="checkbox" checked={selected.includes(field.name)} onChange={(e) => toggle(field.name, e.currentTarget.checked)} />
            <span class="field-option-name">{field.name}</span>
            <span class="field-option-description">
              {!field.filled && <span class="badge badge-warn">never filled here</span>} {field.description}
              {field.deprecated && (
                <>
                  {' '}
                  <span class="badge">deprecated</span>
                </>
              )}
            </span>
          </label>
        ))}
      </fieldset>
      {unfilled.length > 0 && (
        <label class="checkbox small">
          <input type="checkbox" checked={showUnfilled} onChange={(e) => setShowUnfilled(e.currentTarget.checked)} />
          Also show the {unfilled.length} fields of the dataset edgeport never fills (null in every line)
        </label>
      )}
    </div>
  );
}
