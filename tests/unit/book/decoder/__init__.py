"""The unit tests of book/decoder/, one file per module."""
