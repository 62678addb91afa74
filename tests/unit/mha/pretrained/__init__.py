"""The unit tests of mha/pretrained/, one file per module."""
