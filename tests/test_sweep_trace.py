"""``taichi_terra.sweep_trace``: one step replayed sweep by sweep. Its rows must be what the solver does: the sweeps
a replay took never exceed the cap it was given, the row at the step's own sweep count ends where the step did,
and each ratio is the quotient of two consecutive changes."""
import numpy as np
import pytest

from taichi_terra import sweep_trace
from taichi_terra.reference_scenes import tracked_ridges_world


def test_a_traced_step_replays_the_steps_own_sweeps():
    world, _system = tracked_ridges_world(1)
    r = sweep_trace.trace(world, step=297, sweeps=14)  # (driving: 8 sweeps when measured)
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


def test_the_rows_a_sweep_changed_most_are_listed_largest_first():
    world, _system = tracked_ridges_world(1)
    r = sweep_trace.trace(world, step=297, sweeps=4, rows=3)  # (8 sweeps when measured: still converging)
    listed = r["solver_rows"]
    assert 1 <= len(listed) <= 3
    sizes = [np.abs(row["change"]).max() for row in listed]
    assert all(s > 0.0 for s in sizes) and sizes == sorted(sizes, reverse=True)
    for row in listed:
        assert row["kind"] in sweep_trace.ROW_KINDS and len(row["impulse"]) == len(row["reference"]) == 3
        if row["kind"] == "contact":  # (the robot touches the map with its belts only)
            assert row["belt"] >= 0
    # the largest change of an impulse moved the velocities: that sweep's change is not zero
    assert r["rows"][-1]["change"] > 0.0


def test_a_negative_row_count_is_refused():
    world, _system = tracked_ridges_world(1)
    with pytest.raises(ValueError, match="rows must be >= 0"):
        sweep_trace.trace(world, step=0, sweeps=2, rows=-1)
