"""The unit lane: the package, its JavaScript ports and the scripts' functions, in Python only."""
