"""The unit tests of book/minilm/, one file per module."""
