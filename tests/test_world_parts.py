"""The World is a facade over parts (``world.py``'s docstring): its public calls are grouped in faces, each of
which may use the World's public API and its own part only; the parts and the handles they serve never hold
the World. Reference: ARCHITECTURE.md, "World is a facade over parts with explicit dependencies"."""
from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

import taichi_terra as tt
from taichi_terra.bodies.articulated_world import Articulation
from taichi_terra.body_state import BodyStates, FreeBodies
from taichi_terra.checkpoints import Checkpoints
from taichi_terra.contacts import Contacts
from taichi_terra.divergence import DivergenceReports
from taichi_terra.granular.builder import Granular
from taichi_terra.rays import Rays
from taichi_terra.terrain.builder import Terrain
from taichi_terra.terrain.soil_state import SoilStore

PARTS = (FreeBodies, Terrain, Articulation, Granular, Checkpoints, SoilStore, Contacts, Rays, BodyStates,
         DivergenceReports)


def faces():
    return [cls for cls in tt.World.__mro__ if cls not in (tt.World, object)]


def private_uses(cls) -> set[str]:
    """The ``self._name`` attributes ``cls``'s own methods read or write (not dunders)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    return {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
            and node.attr.startswith("_") and not node.attr.startswith("__")}


def own_names(cls) -> set[str]:
    return set(vars(cls))


def test_the_scan_sees_a_face_that_reaches_past_its_part():
    class Leaky:
        _PARTS = ("_terrain",)

        def add(self):
            self._terrain.heightmaps.append(self._bodies)

    assert private_uses(Leaky) - set(Leaky._PARTS) - own_names(Leaky) == {"_bodies"}


@pytest.mark.parametrize("face", faces(), ids=lambda c: c.__name__)
def test_each_face_uses_its_part_and_the_public_api_only(face):
    assert isinstance(getattr(face, "_PARTS", None), tuple), f"{face.__name__} must name its part in _PARTS"
    stray = private_uses(face) - set(face._PARTS) - own_names(face)
    assert not stray, f"{face.__name__} reaches into {sorted(stray)}, which it does not own"


@pytest.mark.parametrize("part", PARTS, ids=lambda c: c.__name__)
def test_no_part_takes_the_world(part):
    params = inspect.signature(part.__init__).parameters
    assert "world" not in params
    source = inspect.getsource(part)
    assert "World" not in source.replace("World._sync_settings", "").replace(":class:`taichi_terra.World`", "")


def test_handles_hold_their_part_not_the_world():
    world = tt.World(dt=0.01)
    world.add_ground()
    body = world.add_box(0.1, 0.1, 0.1, 1.0)
    hm = world.add_heightmap(2, 2, 1.0, 1.0, 0.0, 0.0, [0.0] * 4)
    medium = world.add_granular_medium(-1.0)
    for handle, part in ((body, world._free), (hm, world._terrain)):
        assert not any(value is world for value in vars(handle).values())
        assert any(value is part for value in vars(handle).values())
    assert medium in world.granular_media and body in world.bodies and hm in world.heightmaps
