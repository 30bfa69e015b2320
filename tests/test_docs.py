"""The README is the user's path (what it is, monitoring your own cluster, before/after,
alerts, dashboards) and short; the rest is in docs/, and every link between them resolves."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in page.read_text().splitlines():
        m = re.match(r"^#{1,6} (.+)$", line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower().replace("`", ""))
            out.add(text.replace(" ", "-"))
    return out


def test_the_readme_is_short_and_starts_with_the_users_path() -> None:
    readme = (REPO / "README.md").read_text()
    assert len(readme.encode()) < 16_000, len(readme.encode())
    headings = re.findall(r"(?m)^## (.+)$", readme)
    assert headings[:3] == ["Monitor your own cluster", "Compare before and after",
                            "Alerts and dashboards"], headings
    for page in PAGES[1:]:  # every docs page is in the README's table
        assert f"(docs/{page.name})" in readme, page.name


def test_every_internal_link_resolves() -> None:
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
