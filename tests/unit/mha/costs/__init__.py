"""The unit tests of mha/costs/, one file per module."""
