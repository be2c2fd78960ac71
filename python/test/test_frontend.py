"""What the framework front ends share (fp4train._frontend), without a
framework: the pipeline options of the recipe overrides ([FE4] in
docs/frontends.md)."""

import fp4train
import numpy as np
import pytest
from fp4train._frontend import pipeline_options


def options(**overrides):
    return pipeline_options("nvfp4", 3, "out-in", overrides)


def test_override_values_are_spelled_as_options():
    assert options(stochastic_rounding=False, hadamard=np.int64(32)) == (
        "recipe=nvfp4 step-arg=3 weight-layout=out-in hadamard=32 "
        "stochastic-rounding=0")


def test_one_text_for_one_choice():
    # The text keys the compiled steps: list values (unhashable) and any
    # order of keywords or of a set's values give one text.
    expected = options(roles="fprop,dgrad", keep_first=1)
    assert options(roles=["fprop", "dgrad"], keep_first=1) == expected
    assert options(keep_first=1, roles=("fprop", "dgrad")) == expected
    assert options(roles={"fprop"}) == options(roles=["fprop"])
    assert options(roles=frozenset({"wgrad", "dgrad"})) == \
        options(roles="dgrad,wgrad")
    hash(expected)


def test_values_no_option_spells():
    # Which values an option takes is the pipeline's to say (roles=[1] is
    # its error); a value that is no option's text at all is refused here.
    with pytest.raises(TypeError, match="recipe override roles takes a str, "
                       "a number, a bool or a list of them, got a NoneType"):
        options(roles=None)
    with pytest.raises(TypeError, match=r"got \[\{'fprop': 1\}\]"):
        options(roles=[{"fprop": 1}])
    with pytest.raises(TypeError, match="got a bytes"):
        options(roles=b"fprop")
    with pytest.raises(fp4train.Error, match="not a single value"):
        options(roles="fprop}")
    with pytest.raises(fp4train.Error, match="'roles x' is not an option name"):
        options(**{"roles x": "fprop"})
    with pytest.raises(TypeError, match="recipe must be a str"):
        pipeline_options(["nvfp4"], 3, "out-in", {})
