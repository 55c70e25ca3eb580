import { useState, type FormEvent, type ReactNode } from 'react';
import { Banner } from '../components/common.js';
import { api, ApiError, namespacePath } from '../lib/api-client.js';
import type { InstanceRow } from '../lib/api-types.js';
import { Link, navigate } from '../lib/router.js';

/** Which input a message the API server sent about `spec.<path>` belongs beside. */
const FIELD_OF: [RegExp, string][] = [
  [/^(spec\.)?keepAlive/, 'keepAlive'],
  [/^(spec\.)?hibernation/, 'idleAfter'],
  [/^(spec\.)?addons\.largerStorage/, 'largerStorage'],
  [/^(spec\.)?addons\.backups/, 'backups'],
  [/^(spec\.)?addons\.regionPinning/, 'regionPinning'],
  [/^(spec\.)?plan/, 'plan'],
  [/^(metadata\.)?name/, 'name'],
];

function fieldMessages(error: ApiError | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, message] of Object.entries(error?.body.fields ?? {})) {
    const field = FIELD_OF.find(([pattern]) => pattern.test(path))?.[1] ?? 'form';
    out[field] = out[field] ? `${out[field]}; ${message}` : message;
  }
  return out;
}

function Field(props: {
  id: string;
  label: string;
  help?: string;
  error?: string | undefined;
  children: (describedBy: string) => ReactNode;
}) {
  const describedBy = [props.help ? `${props.id}-help` : '', props.error ? `${props.id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return (
    <div className={`form-field${props.error ? ' has-error' : ''}`}>
      <label htmlFor={props.id}>{props.label}</label>
      {props.children(describedBy)}
      {props.help && (
        <p className="help" id={`${props.id}-help`}>
          {props.help}
        </p>
      )}
      {props.error && (
        <p className="field-error" id={`${props.id}-error`} data-testid={`${props.id}-error`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

/** A text input in a {@link Field}, marked invalid while the field has an error. */
function TextField(props: {
  id: string;
  label: string;
  help?: string;
  error?: string | undefined;
  value: string;
  onChange: (value: string) => void;
  placeholder?: string;
  required?: boolean;
}) {
  return (
    <Field id={props.id} label={props.label} help={props.help} error={props.error}>
      {(d) => (
        <input
          id={props.id}
          value={props.value}
          onChange={(e) => props.onChange(e.target.value)}
          placeholder={props.placeholder}
          required={props.required}
          aria-describedby={d}
          aria-invalid={props.error ? true : undefined}
          autoComplete="off"
        />
      )}
    </Field>
  );
}

/** The paid add-ons: one text input each, sent as `addons.<id>: { <key>: value }` when filled in. */
const ADDONS = [
  { id: 'largerStorage', key: 'size', label: 'Larger storage', help: 'A size such as 10Gi.' },
  {
    id: 'backups',
    key: 'schedule',
    label: 'Backup schedule',
    help: 'Cron, five fields, such as "0 3 * * *".',
  },
  { id: 'regionPinning', key: 'region', label: 'Region pinning', help: 'A region name.' },
] as const;
type AddonId = (typeof ADDONS)[number]['id'];

export function CreateInstancePage({ namespace }: { namespace: string }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState<'free' | 'paid'>('free');
  const [idleAfter, setIdleAfter] = useState('');
  const [keepAlive, setKeepAlive] = useState(false);
  const [addonValues, setAddonValues] = useState<Record<AddonId, string>>({
    largerStorage: '',
    backups: '',
    regionPinning: '',
  });
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const fields = fieldMessages(error);

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const addons: Record<string, unknown> = {};
    for (const addon of ADDONS) {
      const value = addonValues[addon.id].trim();
      if (value) addons[addon.id] = { [addon.key]: value };
    }
    try {
      const created = await api<InstanceRow>('POST', `${namespacePath(namespace)}/instances`, {
        name: name.trim(),
        plan,
        ...(idleAfter.trim() ? { idleAfter: idleAfter.trim() } : {}),
        ...(keepAlive ? { keepAlive } : {}),
        ...(Object.keys(addons).length > 0 ? { addons } : {}),
      });
      navigate(`/instances/${encodeURIComponent(created.name)}`);
    } catch (err) {
      if (err instanceof ApiError) setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <p className="crumbs">
        <Link to="/instances">Instances</Link> / New
      </p>
      <h1>Create a CouchDB instance</h1>
      {error && (
        <Banner kind="error">
          {error.status === 422
            ? 'The API server refused the instance; nothing was created. See the fields below.'
            : error.message}
          {fields.form && <span className="block">{fields.form}</span>}
        </Banner>
      )}
      <form className="card form" onSubmit={submit} noValidate>
        <TextField
          id="name"
          label="Name"
          help="Lower-case letters, digits and '-'; it names the endpoint."
          error={fields.name ?? error?.body.fields?.name}
          value={name}
          onChange={setName}
          required
        />
        <fieldset className="form-field">
          <legend>Plan</legend>
          <label className="inline">
            <input
              type="radio"
              name="plan"
              value="free"
              checked={plan === 'free'}
              onChange={() => setPlan('free')}
            />{' '}
            Free: hibernates when idle, inside the free envelope
          </label>
          <label className="inline">
            <input
              type="radio"
              name="plan"
              value="paid"
              checked={plan === 'paid'}
              onChange={() => setPlan('paid')}
            />{' '}
            Paid: keep alive, larger storage, backups, region pinning
          </label>
          {fields.plan && <p className="field-error">{fields.plan}</p>}
        </fieldset>
        <TextField
          id="idleAfter"
          label="Idle period before hibernating"
          help="A duration such as 30s, 15m or 1h (default 15m)."
          error={fields.idleAfter}
          value={idleAfter}
          onChange={setIdleAfter}
          placeholder="15m"
        />
        <Field id="keepAlive" label="Keep alive (never hibernate)" error={fields.keepAlive}>
          {(d) => (
            <input
              id="keepAlive"
              type="checkbox"
              checked={keepAlive}
              onChange={(e) => setKeepAlive(e.target.checked)}
              aria-describedby={d}
            />
          )}
        </Field>
        <fieldset className="form-field">
          <legend>Add-ons</legend>
          {ADDONS.map((addon) => (
            <TextField
              key={addon.id}
              id={addon.id}
              label={addon.label}
              help={addon.help}
              error={fields[addon.id]}
              value={addonValues[addon.id]}
              onChange={(value) => setAddonValues((values) => ({ ...values, [addon.id]: value }))}
            />
          ))}
        </fieldset>
        <div className="actions">
          <button type="submit" className="button primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create instance'}
          </button>
          <Link to="/instances" className="button secondary">
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}
