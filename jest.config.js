// Jest runs the TypeScript sources as native ES modules (see the `test` script's
// --experimental-vm-modules); @swc/jest strips types without type-checking, which `npm run build` does.
const swc = [
  '@swc/jest',
  { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } },
];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/helpers/global-setup.mjs',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.mjs',
  // One control plane per worker is started lazily by the suites that need it; a slow machine's
  // first start (and CouchDB engines) must not trip the default 5 s.
  testTimeout: 60_000,
  maxWorkers: process.env.CI ? 2 : '50%',
  reporters: ['default', '<rootDir>/test/helpers/totals-reporter.cjs'],
};
