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
  ],
  // Integration and e2e tests wait on process starts, CouchDB engines and controller round trips on a
  // loaded machine; the unit project lowers it (jest reads the timeout from the run, not the project).
  testTimeout: 60_000,
  maxWorkers: process.env.CI ? 2 : '50%',
  reporters: ['default', '<rootDir>/test/helpers/totals-reporter.cjs'],
};
