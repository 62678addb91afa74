"""Every page of the built book in the light theme passes axe-core's WCAG 2.2 A and AA rules: no violation of
impact serious or critical, at 1280 px, and the pages with a figure at 390 px too (tests/browser/site_axe.py
says how; test_site_axe_dark.py scans the other theme, on the other worker of `make test`)."""

from __future__ import annotations

import pytest

from tests.browser.site_axe import theme_tests

pytestmark = [pytest.mark.site, pytest.mark.usefixtures("built_site")]

tab, test_the_page_has_no_serious_accessibility_violation = theme_tests("light")
