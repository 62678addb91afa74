"""The unit tests of _ext/, one file per extension."""
