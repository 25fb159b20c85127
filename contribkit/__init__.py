"""contribkit: make contributing to PyTorch fast and correct."""

__version__ = "0.1.0"
