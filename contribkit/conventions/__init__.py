"""PyTorch's conventions as pure, stdlib-only rules: the catalog, commit messages, branches, test files, globs."""
