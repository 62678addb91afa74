"""WCAG 2's contrast ratio, once, for the browser tests that measure the colours a page paints.

:data:`CONTRAST_JS` declares ``contrast(ink, back)``: the ratio ``(L1 + 0.05) / (L2 + 0.05)`` of the lighter
colour's relative luminance to the darker's, each colour an ``[r, g, b]`` of 0-255 (the WCAG 2 formula, as
axe-core's ``color-contrast`` computes it), and ``rgb(css)``, the numbers of a computed ``rgb(...)`` or
``rgba(...)`` colour. A test's script to ``page.evaluate`` starts with it (see :func:`with_contrast`);
tests/unit/test_contrast.py checks it on colours whose ratio WCAG gives.
"""

CONTRAST_JS = """
  const rgb = (css) => css.match(/[\\d.]+/g).map(Number);
  const contrast = (() => {
    const channel = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    const luminance = (m) => 0.2126 * channel(m[0]) + 0.7152 * channel(m[1]) + 0.0722 * channel(m[2]);
    return (ink, back) => {
      const [a, b] = [luminance(ink), luminance(back)];
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    };
  })();
"""


def with_contrast(body: str) -> str:
    """``() => { <CONTRAST_JS> <body> }``: a script for ``page.evaluate`` whose ``body`` may call ``rgb`` and
    ``contrast``."""
    return "() => {" + CONTRAST_JS + body + "}"
