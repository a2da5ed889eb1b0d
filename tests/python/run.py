"""run.py - runs the Python client's tests (tests/python/) with pytest and
closes with "python-client: N passed, N failed, N skipped" for
scripts/run-tests.sh (errors in fixtures count as failures)."""
import os
import sys

import pytest


class Count:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self.passed += 1
        elif report.failed:
            self.failed += 1
        elif report.skipped:
            self.skipped += 1

    def pytest_collectreport(self, report):
        if report.failed:
            self.failed += 1


here = os.path.dirname(os.path.abspath(__file__))
count = Count()
rc = pytest.main(["-p", "no:cacheprovider", "-q", "-rs", here] + sys.argv[1:], plugins=[count])
print("python-client: %d passed, %d failed, %d skipped" % (count.passed, count.failed, count.skipped))
sys.exit(0 if rc == 0 and count.failed == 0 and count.passed > 0 else 1)
