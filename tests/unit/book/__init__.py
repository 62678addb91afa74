"""The unit tests of book/, one file per module."""
