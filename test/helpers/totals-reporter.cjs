// Prints jest's totals as one plain last line, `N passed, N failed`, for .ci/run, after the line
// saying which CouchDB engine served the suites (global-setup.mjs sets it).
class TotalsReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const engine = process.env.SETTEE_TEST_COUCH_ENGINE;
    if (engine) process.stdout.write(`\n${engine}`);
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = TotalsReporter;
