// Jest runs the TypeScript sources as native ES modules (see the `test` script's
// --experimental-vm-modules); @swc/jest strips types without type-checking, which `npm run build` does.
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

// Jest runs a project's global set-up only when the run selects at least one of its test files, and
// runs one module path once however many projects name it: a run of unit tests alone starts no
// server, and a run of integration and e2e tests starts one control plane per worker, shared by both.
const withControlPlanes = {
  ...common,
  globalSetup: '<rootDir>/test/helpers/global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.mjs',
};

// The queue's suites that also run on Valkey (issue 24, item 9): the scripts, stores and workers
// against a real server, and the SDK suites of the routes users call most. `make test` adds this
// project with SETTEE_TEST_VALKEY=1 (so a run of one of these files by path runs it once, on Redis);
// SETTEE_DATABASE_SERVER=valkey runs any suite on Valkey.
const onValkey = [
  'integration/gateway/queue/lua-scripts',
  'integration/gateway/queue/message-store',
  'integration/gateway/queue/queue-store',
  'integration/gateway/queue/flow-control-store',
  'integration/gateway/queue/url-group-store',
  'integration/gateway/queue/delivery-worker',
  'integration/gateway/queue/schedule-ticker',
  'e2e/queue/sdk-publish',
  'e2e/queue/sdk-dlq',
  'e2e/queue/sdk-messages',
  'e2e/queue/python-sdk',
];
const valkey = {
  ...withControlPlanes,
  displayName: 'valkey',
  testMatch: onValkey.map((suite) => `<rootDir>/test/${suite}.test.ts`),
  setupFiles: ['<rootDir>/test/helpers/queue/on-valkey.ts'],
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/helpers/unit-timeout.ts'],
    },
    {
      ...withControlPlanes,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
    },
    { ...withControlPlanes, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    ...(process.env.SETTEE_TEST_VALKEY === '1' ? [valkey] : []),
  ],
  // Integration and e2e tests wait on process starts, CouchDB engines and controller round trips on a
  // loaded machine; the unit project lowers it (jest reads the timeout from the run, not the project).
  testTimeout: 60_000,
  maxWorkers: process.env.CI ? 2 : '50%',
  // A fresh clone has no suite timings: the suites known to take minutes start first, not last.
  testSequencer: '<rootDir>/test/helpers/long-suites-first.mjs',
  reporters: ['default', '<rootDir>/test/helpers/totals-reporter.cjs'],
};
