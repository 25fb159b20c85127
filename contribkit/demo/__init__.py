"""``contribkit demo``: the whole workflow, offline, on the bundled example."""
