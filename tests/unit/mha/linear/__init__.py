"""The unit tests of mha/linear/, one file per module."""
