/**
 * Builders of the OpenAPI v3 schemas the CRDs carry (apiextensions.k8s.io/v1 structural schemas).
 * Each returns the plain object the CRD's YAML holds, typed with the TypeScript type of the values it
 * accepts, so a resource's types are derived from its schema (`Infer<typeof SCHEMA>`) and a field
 * cannot be in one and missing from the other. Every builder asks for a description: it is what
 * `kubectl explain` prints, and what docs/crds.md lists.
 *
 * Not ajv's JSONSchemaType<T>: it checks a schema against a hand-written type, but wants
 * `nullable: true` on every optional field, which in a CRD would let the API server store nulls.
 */

export type JsonSchema = { [keyword: string]: unknown };

declare const ACCEPTS: unique symbol;

/** A schema of values of type T (T lives only in the type checker). */
export type Schema<T> = JsonSchema & { readonly [ACCEPTS]?: T };

/** The TypeScript type of the values a schema accepts. */
export type Infer<S> = S extends { readonly [ACCEPTS]?: infer T } ? Exclude<T, undefined> : never;

interface Described {
  /** What `kubectl explain` prints for the field. */
  description: string;
}

/** A CEL rule the API server evaluates on the field (x-kubernetes-validations). */
export interface CelRule {
  rule: string;
  message: string;
  fieldPath?: string;
}

type StringOptions = Described & {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: 'date-time';
  default?: string;
};
type NumberOptions = Described & {
  minimum?: number;
  maximum?: number;
  format?: 'int64';
  default?: number;
};

/** Builds a schema of type `type` from its options, which carry no `type` of their own. */
const typed = <T>(type: string, options: object): Schema<T> => ({ type, ...options });

export const string = (options: StringOptions): Schema<string> => typed('string', options);

/** A string that must be one of `values`; its type is their union. */
export const stringEnum = <const V extends readonly string[]>(
  values: V,
  options: Described & { default?: V[number] },
): Schema<V[number]> => typed('string', { enum: [...values], ...options });

export const integer = (options: NumberOptions): Schema<number> => typed('integer', options);

export const number = (options: NumberOptions): Schema<number> => typed('number', options);

export const boolean = (options: Described & { default?: boolean }): Schema<boolean> =>
  typed('boolean', options);

export const array = <I>(
  items: Schema<I>,
  options: Described & {
    maxItems?: number;
    'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
    'x-kubernetes-list-map-keys'?: string[];
  },
): Schema<I[]> => typed('array', { ...options, items });

type Simplify<T> = { [K in keyof T]: T[K] } & unknown;
type Properties = Record<string, Schema<unknown>>;

/** The object type of `properties`: the keys in `required` present, the others optional. */
export type ObjectOf<P extends Properties, R extends keyof P> = Simplify<
  { [K in R]: Infer<P[K]> } & { [K in Exclude<keyof P, R>]?: Infer<P[K]> }
>;

export const object = <P extends Properties, const R extends readonly (keyof P & string)[] = []>(
  options: Described & {
    properties: P;
    required?: R;
    default?: Record<string, never>;
    'x-kubernetes-validations'?: CelRule[];
  },
): Schema<ObjectOf<P, R[number]>> => typed('object', options);

/**
 * Every field below `schema` with its dotted path (`[]` for array items), in the order of the schema:
 * what the description test walks and docs/crds.md lists.
 */
export function fieldsOf(schema: JsonSchema, path: string): { path: string; schema: JsonSchema }[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const items = schema.items as JsonSchema | undefined;
  return [
    ...Object.entries(properties).flatMap(([name, child]) => [
      { path: `${path}.${name}`, schema: child },
      ...fieldsOf(child, `${path}.${name}`),
    ]),
    ...(items ? fieldsOf(items, `${path}[]`) : []),
  ];
}

/** A DNS subdomain name, as metadata.name: no slash, so no other namespace can be named. */
export const OBJECT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** T with every field required at every depth: what SameFields compares. */
type Fields<T> = T extends readonly (infer E)[]
  ? Fields<E>[]
  : T extends object
    ? { [K in keyof T]-?: Fields<Exclude<T[K], undefined>> }
    : T;

/**
 * `true` when A and B have the same fields at every depth, with the same value types, whichever of
 * them each marks optional; `false` otherwise. For types that say more than their schema (a status
 * whose fields the operator always writes together): `const check: SameFields<T, Infer<S>> = true`.
 */
export type SameFields<A, B> = [Fields<A>] extends [Fields<B>]
  ? [Fields<B>] extends [Fields<A>]
    ? true
    : false
  : false;
