"""The unit tests of book/widgets/, one file per module."""
