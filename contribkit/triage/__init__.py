"""``contribkit triage``: repros run on each interpreter and device; where they reproduce, and
from which torch version on."""
