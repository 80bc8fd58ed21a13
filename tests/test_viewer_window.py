"""The viewer in a real window, on a virtual X display (Xvfb; the test run installs it), in its own process."""
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np
    import taichi_terra as tt
    from taichi_terra.viewer import Viewer, Window
    tt.init()
    world = tt.World()
    world.add_ground()
    ball = world.add_sphere(0.1, 1.0)
    ball.set_position([0.0, 0.0, 0.5])
    viewer = Viewer(world, window=Window(200, 150), follow=ball)
    for _ in range(5):
        assert viewer.handle_input() == {"step_once": False}  # no input arrives on the virtual display
        world.step(20)
        viewer.show()
    assert viewer.running
    image = viewer.capture()
    assert image.shape == (150, 200, 3) and image.std() > 0
    assert np.allclose(viewer.camera.target, ball.get_position(0))  # the camera follows the falling ball
    viewer.apply_key("Escape")
    assert not viewer.running
    viewer.close()
    print("window ok", viewer.stats["frames"])
""")


@pytest.mark.needs("vulkan", "xvfb")
def test_window_shows_frames_and_closes():
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 640x480x24", sys.executable, "-c", SCRIPT],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "window ok 6" in out.stdout
