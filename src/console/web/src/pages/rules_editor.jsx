// A link's targeting rules as a form: a rule per card, tried in order, each of one kind (Country,
// Platform, Language or Split) with the fields that kind needs, an optional partner (storefront)
// and its destination. The form writes the rules' JSON (what the API takes), so the preview and
// the save see exactly what the form shows; "Edit as JSON" shows that JSON for bulk edits. The
// server's refusals (`rules[i].field`) are shown beside their fields.
import { useState } from 'preact/hooks';
import { Check, Field } from '../ui.jsx';

const KINDS = [
  ['country', 'Country'],
  ['platform', 'Platform'],
  ['language', 'Language'],
  ['split', 'Split'],
];
const PLATFORMS = [
  ['ios', 'iOS'],
  ['android', 'Android'],
  ['desktop', 'Desktop'],
];

// ISO 3166-1 alpha-2 regions the browser can name, by name ("Germany (DE)"); codes of groupings
// (EU, UN, ...) and private-use ones left out.
const NOT_COUNTRIES = new Set(['EU', 'EZ', 'UN', 'QO', 'XA', 'XB', 'XK', 'ZZ', 'AA', 'QM', 'QN', 'QP', 'QQ', 'QR', 'QS', 'QT', 'QU', 'QV', 'QW', 'QX', 'QY', 'QZ', 'XC', 'XD', 'XE', 'XF', 'XG', 'XH', 'XI', 'XJ', 'XL', 'XM', 'XN', 'XO', 'XP', 'XQ', 'XR', 'XS', 'XT', 'XU', 'XV', 'XW', 'XX', 'XY', 'XZ']);
let countryList = null;
function countries() {
  if (countryList) return countryList;
  const names = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' }) : null;
  const out = [];
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      if (NOT_COUNTRIES.has(code)) continue;
      let name;
      try {
        name = names ? names.of(code) : undefined;
      } catch {
        name = undefined;
      }
      if (name && name !== code) out.push({ code, name });
    }
  }
  out.sort((x, y) => x.name.localeCompare(y.name));
  countryList = out;
  return out;
}

const words = (text) => text.split(/[\s,]+/).map((w) => w.trim()).filter(Boolean);

// A rule of the JSON as the form's model; null when the form cannot show it (two conditions in
// one rule, a split with a condition, an unknown field): the JSON stays the way to edit those.
function toModel(rule) {
  if (!rule || typeof rule !== 'object' || Array.isArray(rule)) return null;
  const known = ['country', 'platform', 'language', 'split', 'partner', 'destination'];
  if (Object.keys(rule).some((k) => !known.includes(k))) return null;
  const kinds = ['country', 'platform', 'language', 'split'].filter((k) => rule[k] !== undefined);
  if (kinds.length !== 1) return null;
  const kind = kinds[0];
  const m = { kind, countries: [], platforms: [], languages: '', partner: rule.partner || '', destination: rule.destination || '', split: [] };
  if (kind === 'split') {
    if (!Array.isArray(rule.split) || rule.destination !== undefined) return null;
    if (rule.split.some((b) => !b || typeof b !== 'object' || Object.keys(b).some((k) => !['weight', 'destination', 'partner'].includes(k)))) return null;
    m.split = rule.split.map((b) => ({ weight: b.weight === undefined ? '' : String(b.weight), destination: b.destination || '', partner: b.partner || '' }));
    return m;
  }
  if (!Array.isArray(rule[kind]) || rule[kind].some((v) => typeof v !== 'string')) return null;
  if (kind === 'country') m.countries = rule.country.map((c) => c.toUpperCase());
  if (kind === 'platform') m.platforms = rule.platform;
  if (kind === 'language') m.languages = rule.language.join(', ');
  return m;
}

function toJson(m) {
  const rule = {};
  if (m.kind === 'country') rule.country = m.countries;
  if (m.kind === 'platform') rule.platform = m.platforms;
  if (m.kind === 'language') rule.language = words(m.languages);
  if (m.partner.trim()) rule.partner = m.partner.trim();
  if (m.kind === 'split') {
    rule.split = m.split.map((b) => {
      const w = b.weight.trim();
      const branch = { weight: /^\d+$/.test(w) ? Number(w) : w, destination: b.destination.trim() };
      if (b.partner) branch.partner = b.partner;
      return branch;
    });
  } else {
    rule.destination = m.destination.trim();
  }
  return rule;
}

// The rules' text as models, or null when it is not a list the form can show.
function parseModels(text) {
  if (!text || !text.trim()) return [];
  let rules;
  try {
    rules = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(rules)) return null;
  const models = rules.map(toModel);
  return models.some((m) => m === null) ? null : models;
}

const emptyRule = () => ({ kind: 'country', countries: [], platforms: [], languages: '', partner: '', destination: '', split: [{ weight: '50', destination: '', partner: '' }, { weight: '50', destination: '', partner: '' }] });

const weightTotal = (split) => split.reduce((sum, b) => sum + (Number(b.weight.trim()) || 0), 0);

// What the form refuses before sending: a split whose weights do not total 100. Keys as the
// server's (`rules[i].split`); empty when the rules' text is not one the form shows.
export function rulesProblems(text) {
  const models = parseModels(text);
  const out = {};
  (models || []).forEach((m, i) => {
    if (m.kind !== 'split') return;
    const total = weightTotal(m.split);
    if (total !== 100) out[`rules[${i}].split`] = `the weights must total 100 (now ${total})`;
  });
  return out;
}

// `errors`: the field errors by their full names ("rules[0].split[1].destination").
export function RulesEditor({ text, onChange, errors = {} }) {
  const [asJson, setAsJson] = useState(() => parseModels(text) === null);
  const [models, setModels] = useState(() => parseModels(text) || []);
  const formable = parseModels(text) !== null;
  const update = (next) => {
    setModels(next);
    onChange(next.length ? JSON.stringify(next.map(toJson), null, 2) : '');
  };
  const change = (i, patch) => update(models.map((m, j) => (j === i ? { ...m, ...patch } : m)));
  const move = (i, by) => {
    const next = [...models];
    const [m] = next.splice(i, 1);
    next.splice(i + by, 0, m);
    update(next);
  };
  const toggle = (e) => {
    const json = e.currentTarget.checked;
    if (!json) {
      const parsed = parseModels(text);
      if (parsed === null) return;
      setModels(parsed);
    }
    setAsJson(json);
  };
  const err = (i, field) => errors[`rules[${i}].${field}`];
  // Refusals no field of the form shows (the list as a whole, a rule as a whole, the JSON).
  const shown = (k) => /^rules\[\d+\]\.(country|platform|language|partner|destination|split(\[\d+\]\.(weight|destination|partner))?)$/.test(k);
  const general = Object.entries(errors).filter(([k]) => k.startsWith('rules') && (asJson || !shown(k)));
  return (
    <fieldset class="rules">
      <legend>Targeting rules (optional), tried in order</legend>
      <Check id="rules-as-json" label="Edit as JSON" checked={asJson} onChange={toggle}
        disabled={asJson && !formable} />
      {asJson && !formable && <p class="hint">These rules have a form the editor cannot show (e.g. two conditions in one rule): edit them as JSON.</p>}
      {general.length > 0 && (
        <p class="error" id="rules-error"><span aria-hidden="true">⚠ </span>{general.map(([k, m]) => `${k}: ${m}`).join('; ')}</p>
      )}
      {asJson
        ? <Field id="link-rules" as="textarea" rows="8" label="Targeting rules (JSON)" value={text}
            onInput={(e) => onChange(e.currentTarget.value)}
            hint='A list, tried in order: [{"country": ["DE", "AT"], "partner": "amazon-de", "destination": "https://…"}, {"platform": ["ios"], "destination": "…"}, {"language": ["fr"], "destination": "…"}, {"split": [{"weight": 70, "destination": "…"}, {"weight": 30, "destination": "…"}]}]' />
        : <>
            {models.length === 0 && <p>No rules: every reader goes to the link's destination.</p>}
            <ol class="rule-list">
              {models.map((m, i) => (
                <li key={i}>
                  <Rule i={i} m={m} count={models.length} err={err} change={(patch) => change(i, patch)}
                    move={(by) => move(i, by)} remove={() => update(models.filter((_, j) => j !== i))} />
                </li>
              ))}
            </ol>
            <button type="button" class="secondary" onClick={() => update([...models, emptyRule()])}>Add rule</button>
          </>}
    </fieldset>
  );
}

function Rule({ i, m, count, err, change, move, remove }) {
  const id = (f) => `rule-${i}-${f}`;
  const value = (e) => e.currentTarget.value;
  return (
    <fieldset class="rule card">
      <legend>Rule {i + 1}</legend>
      <Field id={id('kind')} as="select" label="Rule kind" value={m.kind} onChange={(e) => change({ kind: value(e) })}>
        {KINDS.map(([v, label]) => <option value={v}>{label}</option>)}
      </Field>
      {m.kind === 'country' && (
        <Field id={id('countries')} as="select" multiple size="6" label="Countries" error={err(i, 'country')}
          hint="Readers in any of these countries (Ctrl or ⌘ to choose several)."
          onChange={(e) => change({ countries: [...e.currentTarget.selectedOptions].map((o) => o.value) })}>
          {countries().map((c) => <option value={c.code} selected={m.countries.includes(c.code)}>{c.name} ({c.code})</option>)}
        </Field>
      )}
      {m.kind === 'platform' && (
        <fieldset class={`platforms${err(i, 'platform') ? ' invalid' : ''}`} aria-describedby={err(i, 'platform') ? `${id('platforms')}-error` : undefined}>
          <legend>Platforms</legend>
          {PLATFORMS.map(([v, label]) => (
            <Check id={id(`platform-${v}`)} label={label} checked={m.platforms.includes(v)}
              onChange={(e) => change({ platforms: e.currentTarget.checked ? [...m.platforms, v] : m.platforms.filter((p) => p !== v) })} />
          ))}
          {err(i, 'platform') && <p class="error" id={`${id('platforms')}-error`}><span aria-hidden="true">⚠ </span>{err(i, 'platform')}</p>}
        </fieldset>
      )}
      {m.kind === 'language' && (
        <Field id={id('languages')} label="Languages" value={m.languages} error={err(i, 'language')}
          hint="Language tags, separated by commas, e.g. de, fr-CH." onInput={(e) => change({ languages: value(e) })} />
      )}
      <Field id={id('partner')} label="Rule partner" value={m.partner} error={err(i, 'partner')}
        hint="Optional: another partner's slug (a storefront); empty: the link's partner." onInput={(e) => change({ partner: value(e) })} />
      {m.kind === 'split'
        ? <SplitBranches i={i} m={m} err={err} change={change} />
        : <Field id={id('destination')} type="url" label="Rule destination" value={m.destination} error={err(i, 'destination')}
            onInput={(e) => change({ destination: value(e) })} />}
      <div class="actions">
        <button type="button" class="secondary" disabled={i === 0} onClick={() => move(-1)}>Move rule {i + 1} up</button>
        <button type="button" class="secondary" disabled={i === count - 1} onClick={() => move(1)}>Move rule {i + 1} down</button>
        <button type="button" class="danger" onClick={remove}>Remove rule</button>
      </div>
    </fieldset>
  );
}

function SplitBranches({ i, m, err, change }) {
  const setBranch = (b, patch) => change({ split: m.split.map((x, j) => (j === b ? { ...x, ...patch } : x)) });
  const total = weightTotal(m.split);
  const splitError = err(i, 'split') || err(i, 'destination');
  return (
    <fieldset class="split">
      <legend>Split: readers shared out by weight (the weights total 100)</legend>
      {m.split.map((branch, b) => (
        <div class="branch">
          <Field id={`rule-${i}-split-${b}-weight`} type="text" inputmode="numeric" label="Weight"
            value={branch.weight} error={err(i, `split[${b}].weight`) || (b === 0 ? splitError : undefined)}
            onInput={(e) => setBranch(b, { weight: e.currentTarget.value })} />
          <Field id={`rule-${i}-split-${b}-destination`} type="url" label="Branch destination" value={branch.destination}
            error={err(i, `split[${b}].destination`) || err(i, `split[${b}].partner`)}
            onInput={(e) => setBranch(b, { destination: e.currentTarget.value })} />
          {m.split.length > 1 && (
            <button type="button" class="secondary" onClick={() => change({ split: m.split.filter((_, j) => j !== b) })}>
              Remove branch {b + 1}
            </button>
          )}
        </div>
      ))}
      <p class="hint">Total: {total} of 100.</p>
      <button type="button" class="secondary" onClick={() => change({ split: [...m.split, { weight: '', destination: '', partner: '' }] })}>
        Add branch
      </button>
    </fieldset>
  );
}
