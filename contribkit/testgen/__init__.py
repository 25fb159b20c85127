"""Scaffolding PyTorch-style tests: placement, op/module specs, regression tests from repros, file edits."""
