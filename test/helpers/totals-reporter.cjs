// Prints jest's totals as one plain last line, `N passed, N failed`, for .ci/run.
class TotalsReporter {
  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    process.stdout.write(`\n${results.numPassedTests} passed, ${failed} failed\n`);
  }
}
module.exports = TotalsReporter;
