"""The documentation: the mkdocs site builds with ``--strict`` (every page in the nav, every link and anchor
resolving, every ``:::`` API reference found in the sources), and the README stays short with working links."""
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import mkdocs  # noqa: F401  (the test extra installs it: the build below must really run)

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_MAX_LINES = 300

# inline links and images: [text](target) / ![alt](target), target up to the first space or ')'
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
# reference definitions: [label]: target
_REF = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)


def test_mkdocs_site_builds_strict(tmp_path):
    """Reference: mkdocs' own strict mode (any warning fails the build)."""
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}\n{result.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()


def _relative_targets(text: str) -> list[str]:
    without_code = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    without_code = re.sub(r"`[^`\n]*`", "", without_code)
    targets = _LINK.findall(without_code) + _REF.findall(without_code)
    return [t for t in targets if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) and not t.startswith("#")]


def test_readme_is_short_and_its_links_resolve():
    """The README stays readable in a few minutes, and every relative link or image in it names a file or
    folder of the repository."""
    text = README.read_text(encoding="utf-8")
    n_lines = len(text.splitlines())
    assert n_lines <= README_MAX_LINES, f"README.md has {n_lines} lines, more than {README_MAX_LINES}"
    targets = _relative_targets(text)
    assert targets, "no relative links found in README.md"
    missing = [t for t in targets if not (ROOT / unquote(t.split("#", 1)[0])).exists()]
    assert not missing, f"README.md links to missing files: {missing}"
