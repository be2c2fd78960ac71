"""Exports a PyTorch training step to an MLIR file fp4-opt and fp4-train take.

    python -m fp4train.torch.export SCRIPT.py[:FUNCTION] -o STEP.mlir [--roles]
        [--dp N] [--ep N]

SCRIPT.py defines FUNCTION (default ``training_step``), which takes no
arguments and returns ``(model, loss_fn, *example_data)`` as
``export_training_step`` takes them. The step ([FE1], docs/frontends.md) is
written to STEP.mlir; ``--roles`` prints the role report by parameter name;
``--dp``/``--ep`` write it annotated for a data- or expert-parallel run
(``Step.shard``; ``mpiexec -n dp·ep fp4-train STEP.mlir``).
Every failure is one line on stderr and exit status 1.
"""

import argparse
import importlib.util
import json
import pathlib
import sys


def _load(spec):
    path, _, function = spec.partition(":")
    path = pathlib.Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no script {path}")
    module_spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.resolve().parent))
    module_spec.loader.exec_module(module)
    function = function or "training_step"
    if not callable(getattr(module, function, None)):
        raise AttributeError(f"{path} defines no function {function}()")
    return getattr(module, function)()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m fp4train.torch.export",
        description="Export a PyTorch model's training step as MLIR.")
    parser.add_argument("script", help="SCRIPT.py[:FUNCTION]")
    parser.add_argument("-o", "--output", required=True, help="STEP.mlir")
    parser.add_argument("--roles", action="store_true",
                        help="print the role report by parameter name")
    parser.add_argument("--dp", type=int, default=1,
                        help="processes the batch is split over")
    parser.add_argument("--ep", type=int, default=1,
                        help="processes the expert weights are split over")
    args = parser.parse_args(argv)

    import fp4train
    from . import export_training_step
    try:
        made = _load(args.script)
        if not isinstance(made, tuple) or len(made) < 2:
            raise TypeError(f"{args.script} must return (model, loss_fn, "
                            "*example_data)")
        step = export_training_step(*made)
        sharded = args.dp != 1 or args.ep != 1
        pathlib.Path(args.output).write_text(
            step.shard(dp=args.dp, ep=args.ep) if sharded else step.mlir)
    except (fp4train.Error, OSError, TypeError, AttributeError) as error:
        print(f"fp4train.torch.export: error: {error}".splitlines()[0],
              file=sys.stderr)
        return 1
    if args.roles:
        report = {name or "(no parameter)": [entry["role"] for entry in entries]
                  for name, entries in step.roles().items()}
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
