"""``parse`` compiles the source it read and compares it with the code that runs: a
file edited after its function was defined is refused, and code that did not change
is accepted on every Python (3.13 keeps a class's first line among the constants of
its body, so the text is compiled at the lines it runs from)."""

import importlib.util
import linecache
import sys

import numpy as np
import pytest

from transpile import TranspileError, grad

SOURCE = """\
import numpy as np


def plain(x):
    class Box:
        pass

    return np.sum(x * 2.0)


def scaled(x):
    return np.sum(x * 5.0)
"""


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "edited_module.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("edited_module", path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    yield path, loaded
    sys.modules.pop(spec.name, None)


def test_a_nested_class_is_refused_as_a_class_not_as_changed_source(module):
    _, loaded = module
    with pytest.raises(TranspileError) as info:
        grad(loaded.plain)
    assert "class" in info.value.what and "not the code that runs" not in str(info.value)


def test_an_edited_file_is_refused(module):
    path, loaded = module
    path.write_text(SOURCE.replace("x * 5.0", "x * 3.0"))
    linecache.checkcache(str(path))
    with pytest.raises(TranspileError, match="not the code that runs"):
        grad(loaded.scaled)
    assert loaded.scaled(np.ones(2)) == 10.0  # the module runs the code it was loaded with


def test_an_unedited_function_is_accepted(module):
    _, loaded = module
    assert np.allclose(grad(loaded.scaled)(np.ones(3)), 5.0)
