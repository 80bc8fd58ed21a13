"""The step kernel's module docstring lists its stages as the code runs them: the same names in the same
order as :func:`~taichi_terra.kernels.step.stages_of` with every part compiled in, each the function
``stage_<name>`` of the module, and every variant's stages a subsequence of that order."""
import re

from taichi_terra.kernels import step


def _documented() -> list:
    return re.findall(r"^- ``([A-Z_]+)``", step.__doc__, flags=re.MULTILINE)


def test_the_docstring_lists_the_stages_in_the_order_the_code_runs_them():
    names = {getattr(step, n): n for n in _documented()}
    assert [names[w] for w in step.stages_of(True, True)] == _documented()


def test_every_stage_is_a_function_named_after_it():
    for name in _documented():
        assert callable(getattr(step, "stage_" + name.lower()))


def test_every_variant_runs_its_stages_in_that_order():
    full = step.stages_of(True, True)
    for trees in (False, True):
        for plates in (False, True):
            stages = step.stages_of(trees, plates)
            assert list(stages) == [w for w in full if w in stages]
