"""The unit tests of book/chapters/, one file per module."""
