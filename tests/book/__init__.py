"""The book lane: the chapters' sources, the built site's files, the student edition and the PDF."""
