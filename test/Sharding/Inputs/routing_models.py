"""Steps whose routing the data-parallel partition must get right: the
tokens' global positions (an arange over them), gathers of rows from a split
tensor, a cumulative sum over the tokens ([SH10] in docs/sharding.md). Each
function returns (model, loss_fn, *example_data) for
``python -m fp4train.torch.export SCRIPT.py:FUNCTION``."""

import pathlib
import sys

import torch
from torch import nn

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3]
                       / "python" / "test_torch"))
import models  # noqa: E402


def _regression(model):
    generator = torch.Generator().manual_seed(1)
    return (model, models.mse_loss, torch.randn(32, 32, generator=generator),
            torch.randn(32, 32, generator=generator))


def topk_moe():
    """Plain top-2 routing over 4 experts, outputs combined with index_add_
    over the tokens (an arange of them, docs/frontends.md [FE7])."""
    torch.manual_seed(0)
    return _regression(models.TopKMoE())


class RankedRows(nn.Module):
    """Each row of a linear layer's output moved to its rank among the rows
    (a gather of rows by an index computed from the data), then a running
    sum down the rows."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(32, 32)

    def forward(self, x):
        h = self.linear(x)
        key = h[:, 0]
        rank = (key.unsqueeze(0) < key.unsqueeze(1)).sum(1)
        return torch.cumsum(h.index_select(0, rank), 0) * 0.1


def ranked_rows():
    torch.manual_seed(0)
    return _regression(RankedRows())
