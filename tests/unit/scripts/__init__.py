"""The unit tests of scripts/, one file per module."""
