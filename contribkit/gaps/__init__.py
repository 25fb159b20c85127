"""``contribkit gaps``: a module's public callables ranked by what their docstrings and tests lack."""
