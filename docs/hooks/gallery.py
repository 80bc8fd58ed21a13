"""MkDocs hook: serve the gallery's PNG stills without copying them into docs/.

The pages link the stills where they lie in the repository (``../gallery/x.png`` from ``docs/``), so the
links also work when the Markdown is read on a code host. MkDocs only serves files inside ``docs_dir``; this
hook adds each ``gallery/*.png`` to the site as ``gallery/x.png`` and rewrites the pages' links to point
there. The GIFs are left out on purpose (they are large; the README shows them).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from mkdocs.structure.files import File

GALLERY = Path(__file__).resolve().parents[2] / "gallery"
_IMAGE_LINK = re.compile(r"(\]\()([^)\s]+\.png)((?:\s+\"[^\"]*\")?\))")


def on_files(files, config):
    for png in sorted(GALLERY.glob("*.png")):
        files.append(File.generated(config, f"gallery/{png.name}", abs_src_path=str(png)))
    return files


def on_page_markdown(markdown, page, config, files):
    if page.file.abs_src_path is None:
        return markdown
    page_dir = Path(page.file.abs_src_path).resolve().parent
    served = Path(config["docs_dir"]).resolve() / "gallery"

    def rewrite(match):
        target = (page_dir / match.group(2)).resolve()
        if target.parent != GALLERY:
            return match.group(0)
        link = os.path.relpath(served / target.name, page_dir).replace(os.sep, "/")
        return match.group(1) + link + match.group(3)

    return _IMAGE_LINK.sub(rewrite, markdown)
