"""The unit tests of mha/compute/, one file per module."""
