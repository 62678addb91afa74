"""The text sizes of the book's figures, one place for all of them.

A figure is drawn at 100 dpi. In the book it is shown at most at its own size; in a lecture deck
(`make slides`, slides/template/mha_reveal) at up to 1.3 times it, so that text of ``TEXT_PT`` points
reads at 18 px in a hall (10 / 72 * 100 * 1.3). A figure wider than about 9.5 inches or taller than about
5.5 inches is shrunk to fit its slide and its text with it: the figures keep within that box.
tests/browser/test_slides.py reads ``TEXT_PT`` to measure the decks' figure text, and
tests/unit/test_figure_style.py checks that no figure draws smaller text.
"""

TEXT_PT = 10.0  # points: a figure's smallest text: tick and token labels, legends, notes, values in cells
TITLE_PT = 11.0  # points: titles and axis names
