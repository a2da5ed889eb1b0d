# verdict.py - the closing lines the layering scripts share: one "ok" or
# "FAIL" line per check with what it found, then "NAME: N passed, N failed"
# (the line scripts/run-tests.sh adds up), and the exit status.


def report(name, results):
    """results: [(title, [problem, ...])], a check passing when it has none.  Returns 0 or 1."""
    passed = failed = 0
    for title, bad in results:
        if bad:
            failed += 1
            print('FAIL %s:' % title)
            for b in bad:
                print('  ' + b.replace('\n', '\n  '))
        else:
            passed += 1
            print('ok   %s' % title)
    print('%s: %d passed, %d failed' % (name, passed, failed))
    return 1 if failed else 0
