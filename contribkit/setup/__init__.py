"""Setting up a fork: installing the hooks beside the tracked tree, their state, lintrunner facts."""
