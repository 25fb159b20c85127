"""contribkit's pre-commit hooks: one small stdlib-only module per hook, each with ``main(argv)``.

The hook ids and their modules are declared once, in :mod:`contribkit.conventions.hooklist`. The
rules the hooks enforce live in :mod:`contribkit.conventions`; these modules parse arguments,
read git's files and report.
"""
