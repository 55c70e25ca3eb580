import type { CrdManifest } from './crd-manifest.js';
import { fieldsOf, type JsonSchema } from './crd-schema.js';

/**
 * docs/crds.md: every field of every CRD with its type, default and description, the same words
 * `kubectl explain` prints, rendered from the schemas so the page cannot fall behind them.
 */

/** Text as one Markdown table cell: `|` would end the cell, `*` and `_` start emphasis, `<` a tag. */
const cell = (text: string) =>
  text
    .replace(/[|*_\\]/g, (c) => `\\${c}`)
    .replaceAll('<', '&lt;')
    .replaceAll('\n', ' ');

function typeOf(schema: JsonSchema, required: boolean): string {
  const type = schema.type as string;
  const items = schema.items as JsonSchema | undefined;
  const words = [
    items ? `${items.type as string}[]` : type,
    ...(schema.enum ? [`one of ${(schema.enum as string[]).join(', ')}`] : []),
    ...(schema.format ? [schema.format as string] : []),
    ...(required ? ['required'] : []),
  ];
  return words.join(', ');
}

function fieldRows(root: JsonSchema): string[] {
  const parts = root.properties as Record<string, JsonSchema>;
  return (['spec', 'status'] as const).flatMap((part) => {
    const top = parts[part] as JsonSchema;
    const fields = [{ path: part, schema: top }, ...fieldsOf(top, part)];
    return fields.map(({ path, schema }) => {
      const parentPath = path.slice(0, path.lastIndexOf('.'));
      const parent = fields.find((f) => f.path === parentPath)?.schema ?? root;
      const parentObject = (parent.items as JsonSchema | undefined) ?? parent;
      const name = path.slice(path.lastIndexOf('.') + 1);
      const required = ((parentObject.required as string[] | undefined) ?? []).includes(name);
      const fallback = schema.default === undefined ? '' : `\`${JSON.stringify(schema.default)}\``;
      return `| \`${path}\` | ${typeOf(schema, required)} | ${fallback} | ${cell(schema.description as string)} |`;
    });
  });
}

function section(crd: CrdManifest): string {
  const spec = crd.spec as JsonSchema;
  const names = spec.names as { kind: string; shortNames: string[] };
  const version = (spec.versions as JsonSchema[])[0] as JsonSchema;
  const root = (version.schema as JsonSchema).openAPIV3Schema as JsonSchema;
  return [
    `## ${names.kind}`,
    '',
    `\`${String(crd.metadata?.name)}\`, version \`${String(version.name)}\`, short name \`${names.shortNames.join(', ')}\`. ${cell(root.description as string)}`,
    '',
    '| Field | Type | Default | Description |',
    '|---|---|---|---|',
    ...fieldRows(root),
    '',
  ].join('\n');
}

export function renderCrdReference(crds: CrdManifest[]): string {
  return [
    '# Custom resources: every field',
    '',
    "Generated from the CRDs' schemas (`api/*-schema.ts`) by `npx tsx local/tools/render-crds.ts`;",
    "`make lint` fails when this page, `crds/` or the chart's copy differ from them. The descriptions are",
    'the ones `kubectl explain` prints (`kubectl explain couch.spec.hibernation`). What the rules between',
    'fields are, and why, is in [couchinstance.md](couchinstance.md), [backups.md](backups.md) and',
    '[queue.md](queue.md).',
    '',
    ...crds.map(section),
  ].join('\n');
}
