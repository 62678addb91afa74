"""The unit tests of _ext/ (the book's Sphinx extensions), one file per module."""
