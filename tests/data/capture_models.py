"""Small models for tests/test_capture.sh: the command line's refusals and the capture's rules."""
import torch
import torch.nn as nn

print("importing capture_models")  # a module that prints as it is imported


class Printing(nn.Module):
    """Prints while it is built and at every pass: none of it may reach an oplist written to stdout."""

    def __init__(self):
        super().__init__()
        print("building Printing")
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        print("hello from forward")
        return torch.relu(self.fc(x))


class ItemBranch(nn.Module):
    """Branches on a tensor's value (`if tensor:` and .item())."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            y = y * 2
        return y + y.mean().item()


class Empty(nn.Module):
    """Launches no kernel: an identity."""

    def forward(self, x):
        return x.view(x.shape[0], -1)


class TwoInputs(nn.Module):
    """Takes two inputs (a query and a memory)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, memory):
        return self.fc(x) + memory


def two_inputs():
    return TwoInputs()


def printing():
    return Printing()


def item_branch():
    return ItemBranch()


def empty():
    return Empty()


def broken():
    raise RuntimeError("this factory fails on purpose")


def not_a_module():
    return 42
