"""The divergence watch's side of a world (the step kernel's check is ``kernels/step.py``'s ``watch_env``): its
bounds, its report (read by :class:`DivergenceReports`, made at the world's build) and the error of
``on_divergence="raise"``. Envs are put back by ``World.reset_envs`` (``checkpoints.py``)."""
from __future__ import annotations

import numpy as np

from .kernels.common.layout import (DIVERGED_COORDINATE, DIVERGED_LOOPS, DIVERGED_POSITION, DIVERGED_SPEED,
                                    DIVERGED_VELOCITY)

#: what the divergence watch found (kernels/step.py watch_env, loops_ran_out), by its code
_DIVERGED = {DIVERGED_COORDINATE: "a non-finite coordinate", DIVERGED_POSITION: "a position out of bounds",
             DIVERGED_VELOCITY: "a non-finite velocity", DIVERGED_SPEED: "a speed over the limit",
             DIVERGED_LOOPS: "a launch past the Vulkan driver's loop limit"}


class DivergenceError(RuntimeError):
    """An env diverged and the world was made with ``on_divergence="raise"`` (:meth:`World.get_diverged`)."""


class DivergenceReports:
    """What the step kernel's watch wrote in each env's row of a built world.

    Args:
        state: the world's :class:`~taichi_terra.state.State`.
        n_free: its free bodies (body indices below it); the trees follow.
        system_names: its articulated systems' names, in tree order.
    """

    def __init__(self, state, n_free: int, system_names):
        self._state, self._n_free, self._names = state, int(n_free), list(system_names)

    def found(self) -> dict:
        """``{env: {"step", "body", "what"}}`` of every env found diverged (:meth:`DivergenceWatch.get_diverged`)."""
        from .kernels.common.arrays import ENV

        env = self._state.block("state_i", "env")[:, 0]
        what, body, step = (env[:, getattr(ENV, c)] for c in ("diverged", "diverged_body", "diverged_step"))
        from .kernels.step import STAGE_NAMES

        out = {}
        for e in np.flatnonzero(what):
            b, stage = int(body[e]), None
            if int(what[e]) == DIVERGED_LOOPS:  # (the row's body column holds the stage launched, -1: the step)
                b, stage = -1, STAGE_NAMES[b] if b >= 0 else None
            name = None if b < 0 else f"body {b}" if b < self._n_free else self._names[b - self._n_free]
            out[int(e)] = {"step": int(step[e]), "body": name, "what": _DIVERGED[int(what[e])], "stage": stage}
        return out


class DivergenceWatch:
    """The divergence watch's reports on :class:`taichi_terra.World`, read through its :class:`DivergenceReports`
    (the watch's bounds are the world's settings)."""

    _PARTS = ("_divergence",)

    def get_diverged(self) -> dict:
        """The envs the divergence watch found diverged (:attr:`bounds`, :attr:`speed_limit`; the step kernel
        checks every free body and tree after each step): ``{env: {"step": the env's step after which it was
        found (counted from its build, or as restored), "body": the body's name (a free body's index as
        ``"body <i>"``, an articulated system's name; ``None`` for a launch past the loop limit), "what": "a
        non-finite coordinate", "a position out of bounds", "a non-finite velocity", "a speed over the limit" or
        "a launch past the Vulkan driver's loop limit", "stage": None, or for the last the step's stage whose
        launch it was (``"contacts"``, ``"sweeps"``, ...; None where the whole step was one launch)}}``. The
        last is vulkan's on lavapipe: a launch in which the env's thread ran more loop iterations than the
        driver allows, so that its loops ended early and its state is wrong (``docs/guides/pitfalls.md``; a
        smaller world, or fewer ``solver.sweeps_per_launch`` where the stage is ``"sweeps"``, fits). A diverged
        env stands still until :meth:`reset_envs` or :meth:`restore` puts it back; the other envs are not
        affected."""
        self.build()
        return self._divergence.found()

    def _raise_if_diverged(self) -> None:
        found = self.get_diverged()
        if found:
            e = min(found)
            body = "" if found[e]["body"] is None else f" of {found[e]['body']}"
            body += "" if found[e]["stage"] is None else f" (stage {found[e]['stage']})"
            raise DivergenceError(f"env {e} diverged after its step {found[e]['step']}: {found[e]['what']}{body} "
                                  f"(world.get_diverged(): {len(found)} env(s))")
