"""The unit tests of mha/, one file per module."""
