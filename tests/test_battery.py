"""The bad-input battery (tests/_battery.py): every case of every public mechanism and estimator gets its correct
answer — a dpstats error naming the parameter, raised before any charge, or the documented valid result.

The battery runs in a subprocess, with an address-space limit and an alarm per case, so that an absurd allocation
or an endless loop is classified (as ``unclear`` or ``hang``) instead of taking the test run down. Before the
hardening of issue 27 it found (1,471 cases over 23 callables): 1,111 clear, 50 valid, 103 unclear, 203 silent,
1 valid input refused, 1 error after the charge and 2 hangs. The cases added for covariance (Amin, Dong), the private
norm bound and group-by releases (2,579 cases over 26 callables in all) found, before their fixes: 37 unclear, 63
silent, 2 valid inputs refused and 7 hangs.
"""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_every_bad_input_gets_a_clear_error_and_every_valid_one_its_result():
    # the checkout under test first on the path: from tests/ an installed (editable) dpstats of another checkout
    # would be imported instead
    path = os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH", "")) if p)
    run = subprocess.run(
        [sys.executable, str(HERE / "_battery.py"), "--json"],
        capture_output=True,
        text=True,
        cwd=HERE,
        timeout=900,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(
        subprocess.run(
            [sys.executable, "-c", "import json, dpstats; print(json.dumps(dpstats.__file__))"],
            capture_output=True,
            text=True,
            cwd=HERE,
            env={**os.environ, "PYTHONPATH": path},
        ).stdout
    ).startswith(str(HERE.parent))
    results = json.loads(run.stdout)
    wrong = [r for r in results if r["outcome"] not in ("clear", "valid")]
    report = "\n".join(f"{r['outcome']:8} {r['function']:22} {r['label']:45} {r['detail'][:120]}" for r in wrong)
    assert not wrong, f"{len(wrong)} of {len(results)} cases: {dict(Counter(r['outcome'] for r in wrong))}\n{report}"
    assert len({r["function"] for r in results}) >= 26 and len(results) > 2500
