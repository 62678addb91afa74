"""The book's Sphinx extensions (``_config.yml``'s ``local_extensions`` loads each by its module name; the
student edition adds ``removed_cells``, scripts/student_edition.py); a package too, so that the scripts and
tests import them by name (``from _ext.harness_comments import ...``)."""
