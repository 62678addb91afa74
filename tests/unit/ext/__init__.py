"""The unit tests of _ext/, the Sphinx extensions, one file per module."""
