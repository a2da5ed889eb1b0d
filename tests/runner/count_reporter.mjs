// count_reporter.mjs - a node:test reporter that counts the leaf tests of a run
// (passed, failed, skipped with their reasons) and writes them as one JSON
// line, for tests/runner/run_files.mjs.  Uses only the reporter interface that
// Node 18.15 and later share (`--test-reporter=FILE`): an async generator over
// the run's events.
export default async function* countReporter(source) {
  const counts = { passed: 0, failed: 0, skipped: [], failures: [] };
  for await (const { type, data } of source) {
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    if (data.details?.type === 'suite') continue; // a describe() block, not a test
    const where = { file: data.file, name: data.name };
    if (data.skip !== undefined || data.todo !== undefined) {
      const why = data.skip !== undefined ? data.skip : data.todo;
      counts.skipped.push({ ...where, reason: typeof why === 'string' && why ? why : '(no reason given)' });
    } else if (type === 'test:pass') {
      counts.passed++;
    } else {
      counts.failed++;
      counts.failures.push(where);
    }
  }
  yield `${JSON.stringify(counts)}\n`;
}
