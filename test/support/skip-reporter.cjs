/**
 * Lists every skipped test with its full name at the end of the run, so a suite that could not run here
 * (a real MongoDB without MONGODB_URI, ...) says so and why in the plain `npm test` output.
 */
class SkipReporter {
  onRunComplete(_contexts, results) {
    const skipped = [];
    for (const file of results.testResults) {
      for (const t of file.testResults) {
        if (t.status === 'pending' || t.status === 'skipped' || t.status === 'todo') skipped.push(t.fullName);
      }
    }
    if (skipped.length === 0) return;
    process.stderr.write(`\nSkipped tests (${skipped.length}), each naming why:\n`);
    for (const name of skipped) process.stderr.write(`  - ${name}\n`);
  }
}
module.exports = SkipReporter;
