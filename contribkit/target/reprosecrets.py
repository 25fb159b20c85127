# contribkit repro runtime, part 0: the names of the variables that hold a secret. Embedded
# verbatim in every generated repro script before the other parts, so it is standard-library
# only (it imports nothing) and runs on Python 3.9+. A module of its own so that contribkit's
# redaction, which every command loads, reads the same list without loading the confinement
# (part 3) and what it imports (subprocess, tempfile, shutil).

# Variables that hold a secret, by name (fnmatch, case-insensitive). contribkit's own children
# use the same list (contribkit.core.proc.SECRET_PATTERNS).
SECRET_NAMES = (
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "TOKEN",
    "*_TOKEN",
    "*_TOKEN_*",
    "*TOKEN*",
    "*_PAT",
    "*_SECRET*",
    "*_PASSWORD*",
    "*_KEY",
    "AWS_*",
    "DATABASE_URL",
)
