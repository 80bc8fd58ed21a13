"""A batched 2D contact world: robots push, slide and turn boxes and each other by position-based dynamics.

    from taichi_terra import planar
    world = planar.World(dt=0.1, n_envs=16)
    robot = world.add_rectangle(0.6, 0.4, kinematics="diff", mass=20.0, friction=1.0, position=(-1, 0))
    box = world.add_rectangle(0.3, 0.3, mass=1.0, position=(0, 0))
    world.add_linestring([(2, -2), (2, 2)])                 # a wall (static)
    robot.set_command([0.5, 0.0])                           # 0.5 m/s forward
    world.step(20)
    world.get_contacts()                                    # pairs, normals, depths, points, forces

Objects are static (immovable), passive (pushed; coast to a stop under ground friction) or driven (``diff``,
``omni`` or ``acker`` kinematics following velocity commands). See :class:`World`.
"""
from .objects import COMMANDS, PlanarObject
from .reports import Contact, ContactArrays, ContactReport, ObjectContactArrays
from .world import CONTACT_ITERATIONS, CONTACT_SLOP, REST_TOLERANCE, World

__all__ = ["World", "PlanarObject", "Contact", "ContactReport", "ContactArrays", "ObjectContactArrays", "COMMANDS",
           "CONTACT_SLOP", "REST_TOLERANCE", "CONTACT_ITERATIONS"]
