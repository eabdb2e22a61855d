import type { Reporter, TestModule, TestSuite } from 'vitest/node';

/**
 * Prints one plain closing line, "N passed, N failed, N skipped", that any CI can read.
 *
 * A file or suite that fails outside its tests — while it is collected, in a beforeAll or afterAll
 * (a component that does not start) — counts as one failure: its tests never ran, so without it
 * the line could read "0 failed" for a run that failed. The tests that did not run because of
 * that failure are part of it and are not counted as skipped.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      const failedOutsideTests = (s: TestModule | TestSuite) => s.state() === 'failed' && s.errors().length > 0;
      const broken = new Set<TestModule | TestSuite>();
      for (const s of [m, ...m.children.allSuites()]) {
        if (failedOutsideTests(s)) {
          broken.add(s);
          failed++;
        }
      }
      // a failed file with no error of its own and no test results (it stopped before reporting them)
      if (!broken.has(m) && m.state() === 'failed' && ![...m.children.allTests()].length) failed++;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else if (!underBroken(t.parent, broken)) skipped++;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

function underBroken(s: TestModule | TestSuite, broken: Set<TestModule | TestSuite>): boolean {
  for (let p: TestModule | TestSuite | undefined = s; p; p = p.type === 'module' ? undefined : p.parent) if (broken.has(p)) return true;
  return false;
}
