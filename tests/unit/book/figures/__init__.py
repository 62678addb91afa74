"""The unit tests of book/figures/, one file per module."""
