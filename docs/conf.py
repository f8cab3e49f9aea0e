"""Sphinx configuration of tfrec's documentation site (built by scripts/docs)."""

import tfrec

project = "tfrec"
author = "the tfrec authors"
copyright = "the tfrec authors, Apache-2.0"
version = release = tfrec.__version__

extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "requirements.txt"]
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
# Code blocks whose language Pygments does not know would be a warning (and -W fails on it).
highlight_language = "text"

autodoc_member_order = "bysource"
# Methods that implement a library's interface (Ray's Datasource) keep their own (absent) docs.
autodoc_inherit_docstrings = False
autodoc_default_options = {"members": True, "undoc-members": True}
autodoc_typehints = "signature"
# The optional integrations import these at module level; the pages need only their names.
autodoc_mock_imports = ["polars", "pyarrow", "ray", "torch", "grain"]
# Rust's generated pages live beside the guide (scripts/docs copies them to rust/).
html_extra_path = []
html_theme = "furo"
html_title = f"tfrec {release}"
html_static_path = []
html_show_sourcelink = False
html_copy_source = False
# Nothing is fetched at build time: no intersphinx, no remote images.
