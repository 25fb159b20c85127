"""``contribkit bisect``: the commit that broke a repro, each step decided by the repro's verdict."""
