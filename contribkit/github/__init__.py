"""GitHub: the token chain, the client and its error policy, and where issues come from."""
