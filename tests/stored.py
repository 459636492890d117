"""What the stored outputs of a notebook hold, as the tests read them (shared by tests/notebooks and tests/browser)."""

from __future__ import annotations

import re

SVG_IMG = re.compile(r'<img\b[^>]*\bsrc="data:image/svg\+xml;base64,([A-Za-z0-9+/=]*)"')
"""A stored picture (a widget's static SVG, as an ``<img>`` with a base64 data URL); group 1 is the payload."""
