/**
 * The import rules of docs/architecture.md, checked by `make lint` (dependency-cruiser resolves each
 * import to its file, so the rules speak of folders, not of how an import string is spelled).
 *
 * Components are the deployable parts; shared folders are the project's own library. A component
 * imports the shared folders and itself, never another component; a shared folder imports only
 * shared folders. Tests and benchmarks may import anything: they drive the components from outside.
 */
const COMPONENTS = ['operator', 'gateway', 'local', 'console', 'backup'];
const SHARED = ['api', 'kube', 'observability'];
const anyOf = (folders) => `^(${folders.join('|')})/`;

module.exports = {
  forbidden: [
    {
      name: 'component-imports-another-component',
      comment: 'A component imports only itself and the shared folders (api/, kube/, observability/).',
      severity: 'error',
      from: { path: `^(${COMPONENTS.join('|')})/` },
      to: { path: anyOf(COMPONENTS), pathNot: '^$1/' },
    },
    {
      name: 'shared-folder-imports-a-component',
      comment: 'api/, kube/ and observability/ are shared by every component, so they import none.',
      severity: 'error',
      from: { path: anyOf(SHARED) },
      to: { path: anyOf(COMPONENTS) },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: anyOf([...SHARED, ...COMPONENTS]),
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
