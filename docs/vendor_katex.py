"""Vendor KaTeX into the site: ``python docs/vendor_katex.py [VERSION]``.

The docs site typesets its maths with KaTeX served from the site itself, so pages work offline
and load nothing from another host. This script takes KaTeX's release from the npm registry
(``npm pack katex@VERSION``, the ordinary npm client) and copies what the site uses into
``docs/javascripts/vendor/katex/``: ``katex.min.js``, ``katex.min.css``,
``contrib/auto-render.min.js``, the ``.woff2`` fonts (every current browser reads them; the
stylesheet's other formats are never requested then) and the licence. Run it to move to
another version, then commit the folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

VERSION = "0.19.1"
DEST = Path(__file__).resolve().parent / "javascripts" / "vendor" / "katex"
FILES = ("katex.min.js", "katex.min.css", "contrib/auto-render.min.js")


def main(version: str = VERSION) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["npm", "pack", f"katex@{version}", "--silent"], cwd=tmp, check=True,
                       capture_output=True)  # fmt: skip
        (tarball,) = Path(tmp).glob("katex-*.tgz")
        with tarfile.open(tarball) as tar:
            tar.extractall(tmp, filter="data")
        package = Path(tmp) / "package"
        if DEST.exists():
            shutil.rmtree(DEST)
        (DEST / "contrib").mkdir(parents=True)
        (DEST / "fonts").mkdir()
        for name in FILES:
            shutil.copy(package / "dist" / name, DEST / name)
        for font in (package / "dist" / "fonts").glob("*.woff2"):
            shutil.copy(font, DEST / "fonts" / font.name)
        shutil.copy(package / "LICENSE", DEST / "LICENSE")
        (DEST / "VERSION").write_text(f"katex {version} (npm)\n", encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:2])
