"""The unit tests of book/compute/, one file per module."""
