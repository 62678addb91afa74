"""Every page of the built book in the light theme passes axe-core's WCAG 2.2 A and AA rules: no violation of
impact serious or critical, at 1280 px, and the pages with a figure at 390 px too (tests/browser/site_axe.py
says how; test_site_axe_dark.py scans the other theme, on the other worker of `make test`)."""

from __future__ import annotations

import pytest

from tests.browser.site_axe import cases, rule_ids, scan
from tests.built_site import SITE

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]
THEME = "light"


@pytest.fixture(scope="module")
def tab(browser, built_site):
    """One context in this theme's colour scheme, one tab, reused for every page."""
    context = browser.new_context(color_scheme=THEME)
    tab = context.new_page()
    tab.goto((SITE / "intro.html").as_uri())
    tab.rules = rule_ids(tab)
    yield tab
    context.close()


@pytest.mark.parametrize(("page", "width"), cases())
def test_the_page_has_no_serious_accessibility_violation(tab, page, width):
    found = scan(tab, (SITE / f"{page}.html").as_uri(), THEME, width, tab.rules)
    assert not found, f"{page} at {width} px, {THEME}:\n" + "\n".join(found)
