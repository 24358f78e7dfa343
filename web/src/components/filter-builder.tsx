/**
 * The filter builder of a log job (docs/management-api.md, "Routes"): groups that match all (`and`) or any (`or`) of
 * their items, nested at any depth, and conditions of a field, an operator that fits the field's
 * type, and a value. The filter's JSON text, its operator count (at most 30) and its size (at most
 * 1000 bytes) are shown as it changes.
 */
import { useMemo } from 'preact/hooks';

export type FieldTypes = Record<string, string>;

export type FilterNode =
  { id: number; kind: 'condition'; key: string; operator: string; value: string } | { id: number; kind: 'group'; mode: 'and' | 'or'; items: FilterNode[] };

export type FilterGroup = Extract<FilterNode, { kind: 'group' }>;

export const FILTER_LIMITS = { operators: 30, bytes: 1000 } as const;

/** Which operators each field type takes (the API checks the same table). */
const OPERATORS_BY_TYPE: Record<string, readonly string[]> = {
  string: ['eq', '!eq', 'startsWith', 'endsWith', '!startsWith', '!endsWith', 'contains', '!contains', 'in', '!in'],
  int: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'],
  float: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'],
  timestamp: ['eq', '!eq', 'lt', 'leq', 'gt', 'geq', 'in', '!in'],
  bool: ['eq', '!eq'],
  'string[]': ['contains', '!contains'],
};

const OPERATOR_LABELS: Record<string, string> = {
  eq: 'equals',
  '!eq': 'does not equal',
  lt: 'is less than',
  leq: 'is at most',
  gt: 'is greater than',
  geq: 'is at least',
  startsWith: 'starts with',
  endsWith: 'ends with',
  '!startsWith': 'does not start with',
  '!endsWith': 'does not end with',
  contains: 'contains',
  '!contains': 'does not contain',
  in: 'is one of',
  '!in': 'is none of',
};

let nextId = 1;
export function newCondition(key = 'ClientRequestPath', operator = 'contains', value = ''): FilterNode {
  return { id: nextId++, kind: 'condition', key, operator, value };
}
export function newGroup(mode: 'and' | 'or' = 'and', items: FilterNode[] = []): FilterGroup {
  return { id: nextId++, kind: 'group', mode, items };
}

export function operatorsFor(type: string | undefined): readonly string[] {
  return (type && OPERATORS_BY_TYPE[type]) || [];
}

function typedValue(text: string, type: string | undefined): string | number | boolean {
  const trimmed = text.trim();
  if ((type === 'int' || type === 'float' || type === 'timestamp') && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  if (type === 'bool' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return type === 'string' || type === 'string[]' ? text : trimmed;
}

function toJson(node: FilterNode, types: FieldTypes): unknown {
  if (node.kind === 'group') return { [node.mode]: node.items.map((item) => toJson(item, types)) };
  const type = types[node.key];
  const value =
    node.operator === 'in' || node.operator === '!in'
      ? node.value
          .split(',')
          .map((part) => part.trim())
          .filter((part) => part !== '')
          .map((part) => typedValue(part, type))
      : typedValue(node.value, type);
  return { key: node.key, operator: node.operator, value };
}

/** The filter text the API takes, or null for no filter (an empty top-level group). */
export function filterText(root: FilterGroup, types: FieldTypes): string | null {
  if (root.items.length === 0) return null;
  return JSON.stringify({ where: toJson(root, types) });
}

/** Parses a job's filter text back into groups and conditions; null when it has another shape. */
export function parseFilterText(text: string | null): FilterGroup | null {
  if (!text) return newGroup();
  try {
    const where = (JSON.parse(text) as { where?: unknown }).where;
    const node = fromJson(where);
    if (!node) return null;
    return node.kind === 'group' ? node : newGroup('and', [node]);
  } catch {
    return null;
  }
}

function fromJson(value: unknown): FilterNode | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  for (const mode of ['and', 'or'] as const) {
    if (Array.isArray(record[mode])) {
      const items = (record[mode] as unknown[]).map(fromJson);
      return items.every((item) => item !== null) ? newGroup(mode, items as FilterNode[]) : null;
    }
  }
  if (typeof record.key !== 'string' || typeof record.operator !== 'string') return null;
  const raw = record.value;
  const text = Array.isArray(raw) ? raw.map(String).join(', ') : String(raw ?? '');
  return newCondition(record.key, record.operator, text);
}

function countConditions(node: FilterNode): number {
  return node.kind === 'condition' ? 1 : node.items.reduce((n, item) => n + countConditions(item), 0);
}

export function FilterBuilder({
  root,
  types,
  unfilled,
  onChange,
}: {
  root: FilterGroup;
  types: FieldTypes;
  /** Fields the edge never fills (null in every record): not offered, marked where a condition names one. */
  unfilled?: ReadonlySet<string>;
  onChange: (root: FilterGroup) => void;
}) {
  const text = filterText(root, types);
  const operators = countConditions(root);
  const bytes = text === null ? 0 : new TextEncoder().encode(text).length;
  const filterable = useMemo(
    () =>
      Object.keys(types)
        .filter((name) => operatorsFor(types[name]).length > 0)
        .sort(),
    [types],
  );
  const overOperators = operators > FILTER_LIMITS.operators;
  const overBytes = bytes > FILTER_LIMITS.bytes;
  return (
    <div class="filter-builder">
      <GroupEditor group={root} path="" types={types} fields={filterable} unfilled={unfilled ?? NONE} onChange={(g) => onChange(g as FilterGroup)} />
      <div class="filter-limits" aria-live="polite" id="filter-limits">
        <span class={overOperators ? 'counter-over' : undefined}>
          Operators: {operators} of {FILTER_LIMITS.operators}
        </span>
        <span class={overBytes ? 'counter-over' : undefined}>
          Size: {bytes} of {FILTER_LIMITS.bytes} bytes
        </span>
        {(overOperators || overBytes) && (
          <span class="field-problem">Over the limit: the API will refuse this filter. Remove conditions or shorten values.</span>
        )}
      </div>
      <details class="filter-json">
        <summary>Filter as JSON</summary>
        <pre tabIndex={0}>{text ?? '(no filter: every record is delivered)'}</pre>
      </details>
    </div>
  );
}

const NONE: ReadonlySet<string> = new Set();

function groupName(path: string): string {
  return path === '' ? 'the top level' : `group ${path}`;
}

function GroupEditor({
  group,
  path,
  types,
  fields,
  unfilled,
  onChange,
  onRemove,
}: {
  group: FilterGroup;
  path: string;
  types: FieldTypes;
  fields: string[];
  unfilled: ReadonlySet<string>;
  onChange: (node: FilterNode) => void;
  onRemove?: () => void;
}) {
  const name = groupName(path);
  const setItem = (index: number, node: FilterNode) => onChange({ ...group, items: group.items.map((item, i) => (i === index ? node : item)) });
  const removeItem = (index: number) => onChange({ ...group, items: group.items.filter((_, i) => i !== index) });
  return (
    <fieldset class={path === '' ? 'filter-group filter-root' : 'filter-group'}>
      <legend>{path === '' ? 'Deliver records that match' : `Group ${path}`}</legend>
      <div class="filter-group-head">
        <select aria-label={`Match in ${name}`} value={group.mode} onChange={(e) => onChange({ ...group, mode: e.currentTarget.value as 'and' | 'or' })}>
          <option value="and">all of these (and)</option>
          <option value="or">any of these (or)</option>
        </select>
        {onRemove && (
          <button type="button" class="button-quiet" onClick={onRemove}>
            Remove {name}
          </button>
        )}
      </div>
      {group.items.length === 0 && (
        <p class="muted small">{path === '' ? 'No conditions: every record is delivered.' : 'An empty group: add a condition or remove it.'}</p>
      )}
      <ol class="filter-items">
        {group.items.map((item, i) => {
          const childPath = path === '' ? String(i + 1) : `${path}.${i + 1}`;
          return (
            <li key={item.id}>
              {item.kind === 'group' ? (
                <GroupEditor
                  group={item}
                  path={childPath}
                  types={types}
                  fields={fields}
                  unfilled={unfilled}
                  onChange={(node) => setItem(i, node)}
                  onRemove={() => removeItem(i)}
                />
              ) : (
                <ConditionEditor
                  condition={item}
                  path={childPath}
                  types={types}
                  fields={fields}
                  unfilled={unfilled}
                  onChange={(node) => setItem(i, node)}
                  onRemove={() => removeItem(i)}
                />
              )}
            </li>
          );
        })}
      </ol>
      <div class="filter-group-actions">
        <button type="button" aria-label={`Add condition to ${name}`} onClick={() => onChange({ ...group, items: [...group.items, newCondition()] })}>
          Add condition
        </button>
        <button
          type="button"
          aria-label={`Add group to ${name}`}
          onClick={() => onChange({ ...group, items: [...group.items, newGroup(group.mode === 'and' ? 'or' : 'and', [newCondition()])] })}
        >
          Add group
        </button>
      </div>
    </fieldset>
  );
}

function ConditionEditor({
  condition,
  path,
  types,
  fields,
  unfilled,
  onChange,
  onRemove,
}: {
  condition: Extract<FilterNode, { kind: 'condition' }>;
  path: string;
  types: FieldTypes;
  fields: string[];
  unfilled: ReadonlySet<string>;
  onChange: (node: FilterNode) => void;
  onRemove: () => void;
}) {
  const type = types[condition.key];
  const operators = operatorsFor(type);
  const isSet = condition.operator === 'in' || condition.operator === '!in';
  const problem = !operators.includes(condition.operator)
    ? `Pick an operator for ${condition.key}.`
    : condition.value.trim() === '' && type !== 'string'
      ? 'Give a value.'
      : (type === 'int' || type === 'float') && !isSet && !/^-?\d+(\.\d+)?$/.test(condition.value.trim())
        ? `${condition.key} is a number.`
        : type === 'bool' && !/^(true|false)$/.test(condition.value.trim())
          ? 'Write true or false.'
          : null;
  const setKey = (key: string) => {
    const allowed = operatorsFor(types[key]);
    onChange({ ...condition, key, operator: allowed.includes(condition.operator) ? condition.operator : (allowed[0] ?? 'eq') });
  };
  return (
    <div class="filter-condition" role="group" aria-label={`Condition ${path}`}>
      <span class="filter-path" aria-hidden="true">
        {path}
      </span>
      <select aria-label={`Field of condition ${path}`} value={condition.key} onChange={(e) => setKey(e.currentTarget.value)}>
        {fields
          .filter((name) => !unfilled.has(name) || name === condition.key)
          .map((name) => (
            <option key={name} value={name}>
              {name}
              {unfilled.has(name) ? ' (never filled here)' : ''}
            </option>
          ))}
      </select>
      <select
        aria-label={`Operator of condition ${path}`}
        value={condition.operator}
        onChange={(e) => onChange({ ...condition, operator: e.currentTarget.value })}
      >
        {operators.map((op) => (
          <option key={op} value={op}>
            {OPERATOR_LABELS[op] ?? op} ({op})
          </option>
        ))}
      </select>
      <input
        aria-label={`Value of condition ${path}`}
        value={condition.value}
        placeholder={isSet ? 'a, b, c' : type === 'bool' ? 'true' : 'value'}
        aria-invalid={problem ? true : undefined}
        onInput={(e) => onChange({ ...condition, value: e.currentTarget.value })}
      />
      <button type="button" class="button-quiet" aria-label={`Remove condition ${path}`} onClick={onRemove}>
        Remove
      </button>
      {problem && <span class="field-problem filter-problem">{problem}</span>}
    </div>
  );
}
