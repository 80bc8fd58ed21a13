"""``perf/sweep_trace.py``: one step replayed sweep by sweep. Its rows must be what the solver does: the sweeps a
replay took never exceed the cap it was given, the row at the step's own sweep count ends where the step did, and
each ratio is the quotient of two consecutive changes."""
import numpy as np

import taichi_terra as tt
from perf import sweep_trace


def test_a_traced_step_replays_the_steps_own_sweeps():
    tt.init()
    r = sweep_trace.trace("tracked", step=300, sweeps=14)  # (driving: 9 sweeps when measured)
    rows = r["rows"]
    assert [row["sweeps"] for row in rows] == list(range(1, 15))
    assert all(row["taken"] <= row["sweeps"] for row in rows)
    assert "change" not in rows[0]
    for a, b in zip(rows[1:], rows[2:]):
        assert b["ratio"] is None or np.isclose(b["ratio"], b["change"] / a["change"])
    own = [row for row in rows if row["taken"] == r["own_sweeps"]]
    assert 1 < r["own_sweeps"] < 14 and own and all(row["to_reference"] == r["own_to_reference"] for row in own)
    assert all(row.get("change") == 0.0 and not row["moved"] for row in own[1:])  # (it had stopped by itself)
    assert r["reference_sweeps"] > r["own_sweeps"]  # (swept to 1e-12 m/s)
