/**
 * The import rules of docs/architecture.md, checked by `make lint` (dependency-cruiser resolves each
 * import to its file, so the rules speak of folders, not of how an import string is spelled).
 *
 * Components are the deployable parts; shared folders are the project's own library. A component
 * imports the shared folders and itself, never another component; a shared folder imports only
 * shared folders. Tests and benchmarks may import anything: they drive the components from outside.
 * No import circle anywhere. Inside the gateway, the proxy and the queue never import each other
 * (what both need lives in a gateway module named for what it is), and the queue reads bottom to
 * top in layers: a layer imports itself and the layers below it, never one above.
 */
const COMPONENTS = ['operator', 'gateway', 'local', 'console'];
const SHARED = ['api', 'kube', 'observability', 'couchdb'];
/** Not components, but cruised too, so a circle among tests, benchmarks or examples fails as well. */
const OUTSIDE = ['test', 'bench', 'examples'];
const anyOf = (folders) => `^(${folders.join('|')})/`;

/** gateway/queue/'s layers, bottom first; its root files (index.ts, queue-service.ts) compose them all. */
const QUEUE_LAYERS = ['core', 'scripts', 'stores', 'bindings', 'workers', 'http'];
const QUEUE = 'gateway/queue/';
const queueLayerRules = QUEUE_LAYERS.map((layer, i) => ({
  name: 'queue-layer-imports-a-higher-layer',
  comment: `gateway/queue/${layer}/ imports only ${QUEUE_LAYERS.slice(0, i + 1).join(', ')} (layers read ${QUEUE_LAYERS.join(' -> ')} -> root).`,
  severity: 'error',
  from: { path: `^${QUEUE}${layer}/` },
  to: {
    path: [
      ...(i + 1 < QUEUE_LAYERS.length ? [`^${QUEUE}(${QUEUE_LAYERS.slice(i + 1).join('|')})/`] : []),
      `^${QUEUE}[^/]+$`,
    ],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'component-imports-another-component',
      comment:
        'A component imports only itself and the shared folders (api/, kube/, observability/, couchdb/).',
      severity: 'error',
      from: { path: `^(${COMPONENTS.join('|')})/` },
      to: { path: anyOf(COMPONENTS), pathNot: '^$1/' },
    },
    {
      name: 'shared-folder-imports-a-component',
      comment: 'api/, kube/, observability/ and couchdb/ are shared by every component, so they import none.',
      severity: 'error',
      from: { path: anyOf(SHARED) },
      to: { path: anyOf(COMPONENTS) },
    },
    {
      name: 'no-circular',
      comment: 'An import circle anywhere: no file of it can be read, tested or loaded without the others.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'proxy-and-queue-import-each-other',
      comment:
        'The proxy (and the gateway HTTP kit, envelope) and the queue share code only through gateway modules named for what they are (gateway/queue-url/, gateway/http/limited-body.ts).',
      severity: 'error',
      from: { path: '^gateway/(proxy|http|envelope)/' },
      to: { path: `^${QUEUE}` },
    },
    {
      name: 'proxy-and-queue-import-each-other',
      comment: 'The queue imports nothing of the proxy or the envelope.',
      severity: 'error',
      from: { path: `^${QUEUE}` },
      to: { path: '^gateway/(proxy|envelope)/' },
    },
    {
      name: 'http-kit-imports-proxy',
      comment:
        'gateway/http/ is the HTTP kit the proxy, the envelope and the queue stand on: it imports none of them (the proxy decides, the kit frames and splices).',
      severity: 'error',
      from: { path: '^gateway/http/' },
      to: { path: '^gateway/(proxy|envelope)/' },
    },
    ...queueLayerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: anyOf([...SHARED, ...COMPONENTS, ...OUTSIDE]),
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
