"""``contribkit op``: an operator from Python to its kernels (native_functions.yaml,
derivatives.yaml, the target torch's decompositions, lowerings, OpInfos and dispatch table)."""
