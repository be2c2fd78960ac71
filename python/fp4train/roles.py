"""The role report of a training step (docs/semantics.md, role rules)."""

import json

from . import _fp4train


def role_report(module, weight_layout="out-in"):
    """Classifies the contractions of every function of ``module``.

    Returns one dict per contraction, in program order, with the keys of the
    ``fp4train-annotate-roles`` JSON report: ``role`` (``"fprop"``,
    ``"dgrad"``, ``"wgrad"`` or ``"other"``), ``op`` (the linalg op name),
    ``param`` (index of the weight argument, or None), ``block`` (the
    weight's ``fp4train.block``, or None), ``m``, ``n``, ``k``, ``batch``
    (sizes, None when dynamic) and ``loc`` (``"<input>:line:col"``).
    ``weight_layout`` is ``"out-in"`` (PyTorch ``nn.Linear``) or ``"in-out"``
    (JAX/Flax ``Dense``). The module is not changed. Raises fp4train.Error on
    an unknown layout or an analysis error, TypeError on wrong argument types.
    """
    if not isinstance(module, _fp4train.Module):
        raise TypeError("module must be an fp4train.Module, got "
                        + type(module).__name__)
    if not isinstance(weight_layout, str):
        raise TypeError("weight_layout must be a str")
    return json.loads(_fp4train._role_report(module, weight_layout))
